"""Training poses for a prepared character (Xu & Barbič): their contacts and their pose-space modes.

:func:`prepare_pose_space` builds a :class:`PoseSpaceCharacter` (the pose-space
model with its render vertices and guard probes); the frame loop then drives it
through :class:`core.posespace.drive.PoseSpaceDrive`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import RigError, SimulationError
from ..geometry.embedding import interpolate
from ..geometry.tetmesh import boundary_faces
from ..model.rig import rest_parameters
from ..posespace.model import build_pose_space, detect_contacts
from ..posespace.points import PosePoints
from ..posespace.rbf import pose_features
from ..settings import CONTACT_AUTO
from .guards import guard_probes
from .prepare import Cancelled, PoseSpaceCharacter, PreparedCharacter

# A pose's contact (core.settings.CONTACT_KINDS): "auto" (skin the pose presses together,
# :func:`contact_vertices`), None (no contact) or a painted render-vertex mask (k,) in [0, 1] (its
# surface, extended into the volume).
ContactSpec = str | np.ndarray | None
# A painted contact mask holds the tet surface vertices where its extension exceeds this.
CONTACT_MASK_LEVEL = 0.5


def pose_contacts(prepared: PreparedCharacter, p: np.ndarray, spec: ContactSpec) -> np.ndarray | None:
    """Tet vertices (c,) held still in the pose with rig parameters p (12 b,), per :data:`ContactSpec`."""
    mesh = prepared.mesh
    if spec is None:
        return None
    if isinstance(spec, str):
        if spec != CONTACT_AUTO.lower():
            raise SimulationError(f"a pose's contact must be 'auto', None or a painted mask, got {spec!r}")
        return detect_contacts(prepared.model, np.asarray(p)[None])[0]
    mask = np.asarray(spec, dtype=np.float64)
    count = len(prepared.embedding.tet)
    if mask.shape != (count,):
        raise SimulationError(f"a contact mask needs one value per mesh vertex ({count}), got shape {mask.shape}")
    inside = interpolate_mask_to_tets(prepared, mask)
    surface = np.zeros(mesh.n, dtype=bool)
    surface[np.unique(boundary_faces(mesh.T))] = True
    return np.flatnonzero(surface & (inside > CONTACT_MASK_LEVEL))


def interpolate_mask_to_tets(prepared: PreparedCharacter, mask: np.ndarray) -> np.ndarray:
    """A render-vertex mask (k,) carried to the tet vertices (n,): each tet vertex takes the largest
    value of the render vertices embedded in its tets (a painted patch marks the tets it touches)."""
    emb, T = prepared.embedding, prepared.mesh.T
    out = np.zeros(prepared.mesh.n)
    np.maximum.at(out, T[emb.tet].ravel(), np.repeat(np.clip(mask, 0.0, 1.0), 4))
    return out


def _check_distinct(poses: np.ndarray, frames: Sequence[int]) -> None:
    """Refuse, naming the frames, two training poses (or one and the rest) with the same bone rotations:
    the RBF cannot tell them apart."""
    b = poses.shape[1] // 12
    features = np.array([pose_features(p) for p in [rest_parameters(b), *poses]])  # loop over poses, a handful
    names = ["the rest frame", *[f"frame {f}" for f in frames]]
    D = np.linalg.norm(features[:, None] - features[None], axis=2)
    same = np.argwhere(np.triu(D <= 1e-9, k=1))
    if len(same):
        i, j = same[0]
        raise SimulationError(
            f"the training poses at {names[i]} and {names[j]} have the same bone rotations "
            "(only a move of the whole rig tells them apart); remove one of them"
        )


def prepare_pose_space(
    prepared: PreparedCharacter,
    poses: np.ndarray,
    frames: Sequence[int],
    contacts: Sequence[ContactSpec] | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    reach: float = 0.0,
    one_sided: Sequence[bool] | None = None,
) -> PoseSpaceCharacter:
    """Pose-space modes for training poses (k', 12 b) taken at ``frames`` (k',), with their contacts.

    reach > 0 gives the poses with contact local RBF support (:func:`build_pose_space`); 0 the global blend.
    one_sided (k',): the poses whose contact is one-sided (core.settings.POSE_CONTACT_MODES): no stick
    basis; the skin they press together is kept apart by Skin on Skin, which the drive turns on for them.

    progress(done, total) after each pose; cancelled() is asked before each (raises :class:`Cancelled`).
    """
    t0 = time.perf_counter()
    model = prepared.model
    if model.rig_weights is None:
        raise RigError("pose-space modes need the character's bone weights")
    poses = np.atleast_2d(np.asarray(poses, dtype=np.float64))
    if len(frames) != len(poses):
        raise SimulationError(f"expected one frame per pose, got {len(frames)} for {len(poses)}")
    specs = list(contacts) if contacts is not None else [None] * len(poses)
    _check_distinct(poses, frames)
    sticks = [pose_contacts(prepared, p, c) for p, c in zip(poses, specs)]

    def step(done: int, total: int) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("computing the pose-space modes was cancelled; nothing was changed")
        if progress is not None:
            progress(done, total)

    step(0, len(poses))
    sided = None if one_sided is None else [bool(o) for o in one_sided]
    ps = build_pose_space(model, prepared.material, poses, progress=step, contacts=sticks, reach=reach, one_sided=sided)
    emb, T = prepared.embedding, prepared.mesh.T
    render_w = np.stack([interpolate(emb, T, W) for W in ps.alignment.bases])
    if prepared.keep is not None:
        render_w[:, ~prepared.keep] = 0.0  # skipped loose parts follow the rig only
    where = prepared.render_points
    assert where is not None  # prepare_character sets it
    probes = guard_probes(model.X)
    return PoseSpaceCharacter(
        model=ps,
        render=PosePoints(ps, render_w, where, dtype=np.float32),
        probes=PosePoints(ps, ps.alignment.bases[:, probes], model.X[probes]),
        # _check_distinct refused a pose at the rest, so build_pose_space put the rest first.
        frames=(-1, *[int(f) for f in frames]),
        contacts=(0, *[0 if c is None or o else len(c) for c, o in zip(sticks, sided or [False] * len(sticks))]),
        seconds=time.perf_counter() - t0,
    )
