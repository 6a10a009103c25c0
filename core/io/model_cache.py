"""The model cache: a reduced model saved beside the .blend, keyed by its inputs.

A cached model is trusted only when its format version and the SHA-256 of
every input that shaped it (mesh, material, rig, m, r, leak field, seed)
match; anything else is refused and recomputed, never used.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from dataclasses import fields
from pathlib import Path

import numpy as np

from ..errors import CacheError
from ..geometry.tetmesh import TetMesh
from ..model.fibers import FIBER_DELTA, Fibers
from ..model.leak import SWING_CAP, SWING_ROUNDS
from ..model.materials import Material
from ..model.parts import MAX_PARTS, MIN_PART_SHARE, Parts
from ..model.rig import LBSRig, LinearRig, Rig
from ..subspace import flesh
from ..subspace.flesh_model import build_flesh_model
from ..subspace.reduced import SLOWEST_ROUNDS, ReducedModel, build_reduced_model
from ..subspace.skinning_modes import AUGMENT_FLOOR, MISSED_REACH
from .atomic import save_npz_atomic

# The constants that shape an augmented model (issue 31): a cache built with others is not reused.
AUGMENTATION = (AUGMENT_FLOOR, MISSED_REACH, SWING_CAP, SWING_ROUNDS, SLOWEST_ROUNDS)

# The constants that shape a flesh-calibrated model (issue 37).
FLESH = (
    "m slowest Ritz vectors",  # the budget rule of build_flesh_model
    MIN_PART_SHARE,
    MAX_PARTS,
    flesh.WEIGHT_ROUNDS,
    flesh.REDUCED_ROUNDS,
    "sag along the stiffest direction, across an elongated part; held parts follow; floor",
    flesh.ELONGATED,
    flesh.FLOOR,
    flesh.FLOOR_ROUNDS,
    flesh.LOCAL_MODE,
    flesh.SEEN,
    flesh.FACTOR_RANGE,
    flesh.HELD_SAG,
    flesh.SAG_PERCENTILE,
    flesh.INDEPENDENT,
    flesh.RELAX,
    flesh.CONVERGED,
)

# 2: exactly the requested number of clusters (older caches had another count).
# 3: the flesh calibration's reference sag and part sags (issue 37).
FORMAT_VERSION = 3


def input_hash(*arrays: np.ndarray | float | int | str | None) -> str:
    """SHA-256 over the exact bytes, shapes and dtypes of every input."""
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"<none>")
            continue
        arr = np.ascontiguousarray(np.asarray(a))
        h.update(f"{arr.dtype.str}{arr.shape}".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def model_key(
    mesh: TetMesh,
    material: Material,
    rig: Rig | None,
    m: int,
    r: int,
    leak: np.ndarray | None,
    seed: int,
    held: np.ndarray | None = None,
    extra_weights: np.ndarray | None = None,
    extra_groups: np.ndarray | None = None,
    parts: Parts | None = None,
    fibers: Fibers | None = None,
) -> str:
    """The cache key of a reduced model: a hash of every input that shapes it (held: planted tet vertices;
    extra_weights: (n, k) appendage weights added to the modes; parts: the flesh calibration's)."""
    if isinstance(rig, LBSRig):
        rig_arr: np.ndarray | None = rig.weights
    elif isinstance(rig, LinearRig):
        rig_arr = rig.J.toarray() if rig.J.nnz < 5_000_000 else rig.J.data
    else:
        rig_arr = None
    return input_hash(
        "skinmodes-reduced",
        FORMAT_VERSION,
        mesh.X,
        mesh.T,
        material.mu,
        material.lam,
        material.density,
        rig_arr,
        m,
        r,
        leak,
        seed,
        None if held is None else np.asarray(held, dtype=np.int64),
        *(() if extra_weights is None else ("extra-weights", *AUGMENTATION, extra_weights, extra_groups)),
        *(() if parts is None else ("flesh", *FLESH, parts.bone_part, parts.loads, parts.carried, parts.thin)),
        *(() if fibers is None else ("fibers", FIBER_DELTA, fibers.axes, fibers.strength, fibers.bone)),
    )


_ARRAY_FIELDS = [f.name for f in fields(ReducedModel) if f.name != "timings"]


def save_model(model: ReducedModel, path: str | os.PathLike[str], key: str) -> Path:
    """Write the model to ``path`` (.npz) atomically, with the process umask (see :mod:`core.atomic`)."""
    path = Path(path)
    payload: dict[str, np.ndarray] = {"format_version": np.asarray(FORMAT_VERSION), "key": np.asarray(key)}
    for name in _ARRAY_FIELDS:
        value = getattr(model, name)
        if value is not None:
            payload[name] = np.asarray(value)
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_npz_atomic(path, payload)  # created with the process umask: a farm's render user can read it


def load_model(path: str | os.PathLike[str], key: str) -> ReducedModel:
    """Read a model saved for exactly these inputs; raise :class:`CacheError` otherwise.

    Corrupt files, other format versions and models built from other inputs
    are all refused (never trusted): the caller recomputes.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            version = int(data["format_version"])
            stored_key = str(data["key"])
            if version != FORMAT_VERSION:
                raise CacheError(f"cache {path.name} has format {version}, expected {FORMAT_VERSION}; recomputing")
            if stored_key != key:
                raise CacheError(
                    f"cache {path.name} was built for other inputs (mesh, rig or settings changed); recomputing"
                )
            values = {name: data[name] for name in _ARRAY_FIELDS if name in data.files}
    except CacheError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, io.UnsupportedOperation) as exc:
        raise CacheError(f"cache {path.name} is unreadable ({type(exc).__name__}); recomputing") from exc
    values["scale"] = float(values["scale"])
    if "reference_sag" in values:
        values["reference_sag"] = float(values["reference_sag"])
    model = ReducedModel(**values)
    if not all(np.isfinite(np.asarray(getattr(model, f))).all() for f in ("weights", "A_L", "A_M", "C_W")):
        raise CacheError(f"cache {path.name} holds non-finite values; recomputing")
    return model


def load_or_build(
    path: str | os.PathLike[str] | None,
    mesh: TetMesh,
    material: Material,
    rig: Rig | None,
    m: int,
    r: int,
    leak: np.ndarray | None = None,
    seed: int = 0,
    log: list[str] | None = None,
    held: np.ndarray | None = None,
    extra_weights: np.ndarray | None = None,
    extra_groups: np.ndarray | None = None,
    parts: Parts | None = None,
    fibers: Fibers | None = None,
) -> ReducedModel:
    """Load the cached model for these inputs, or build (and cache) it: with ``parts``, the flesh-calibrated
    model (:func:`core.subspace.flesh_model.build_flesh_model`; ``extra_weights`` are then not used), else
    the seed's (:func:`core.subspace.reduced.build_reduced_model`).

    Any cache problem is reported through ``log`` (one line) and the model
    recomputed; nothing invalid is ever used.
    """
    if parts is not None:
        extra_weights = extra_groups = None
    else:
        fibers = None  # fibers come with the flesh calibration
    key = model_key(mesh, material, rig, m, r, leak, seed, held, extra_weights, extra_groups, parts, fibers)
    notes: list[str] = [] if log is None else log
    if path is not None and Path(path).exists():
        try:
            return load_model(path, key)
        except CacheError as exc:
            notes.append(str(exc))
        except OSError as exc:  # a folder, an unreadable file: the cache is optional, never fatal
            notes.append(f"cache {Path(path).name} cannot be read ({exc.strerror or exc}); recomputing")
    model = (
        build_reduced_model(
            mesh,
            material,
            rig,
            m,
            r,
            leak=leak,
            seed=seed,
            held=held,
            extra_weights=extra_weights,
            extra_groups=extra_groups,
        )
        if parts is None
        else build_flesh_model(mesh, material, rig, m, r, parts, leak=leak, seed=seed, held=held, fibers=fibers)
    )
    if path is not None:
        try:
            save_model(model, path, key)
        except OSError as exc:  # a full disk, a read-only folder, a folder of that name: costs the reuse only
            notes.append(
                f"could not cache the modes as {Path(path).name} in {Path(path).parent} "
                f"({exc.strerror or exc}); recomputed next time"
            )
    return model
