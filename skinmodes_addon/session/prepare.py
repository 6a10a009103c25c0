"""Preparing a request's character: mesh, volume weights, modes, pose-space modes (no bpy, any thread)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..character import flat_mesh_error
from ..core.dynamics.simulator import uses_arap as simulator_uses_arap
from ..core.errors import MeshError, SubspaceError
from ..core.pipeline import PreparedCharacter, SolverSettings, prepare_character, prepare_pose_space
from ..registry import PREPARED_ONLY
from ..threads import one_blas_thread
from .prepared import check_prepared, check_unchanged
from .request import SessionRequest


def prepare(
    request: SessionRequest,
    progress: Callable[[str, float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> PreparedCharacter:
    """Mesh, volume weights, modes, clusters, products and embedding (or the cache's): no bpy, any thread.

    On one BLAS thread, as the simulation: ARPACK's and the dense products' sums split across threads
    round differently with their count, so a model prepared on the machine's thread count differed in
    the last bits between a desk and a farm node (or a command line run with OPENBLAS_NUM_THREADS=1).
    """
    with one_blas_thread():
        return _prepare(request, progress, cancelled)


def _prepare(
    request: SessionRequest,
    progress: Callable[[str, float], None] | None,
    cancelled: Callable[[], bool] | None,
) -> PreparedCharacter:
    """:func:`prepare`'s work, on whatever BLAS threads the caller set."""
    # The character's stages take the first 92 % of the time; the slowest frequency (a dense
    # eigenproblem, up to ~2 s on 2 cores) the rest.  It is found here, off the main thread,
    # because the panel and the first simulated frame both ask for it.
    share = 0.92

    def stage(name: str, fraction: float) -> None:
        if progress is not None and name != "done":
            progress(name, share * fraction)

    # A bake that must not prepare (--prepared-only) refuses here, before any work, if the cache lacks it.
    stamps = check_prepared(request) if PREPARED_ONLY else None
    try:
        prepared = prepare_character(
            request.character,
            request.subspace,
            request.material,
            cache_dir=request.cache,
            progress=stage,
            cancelled=cancelled,
        )
    except MeshError as exc:
        said = flat_mesh_error(request.object_name, exc, object_rig=not request.binding.armature)
        if said is exc:
            raise
        raise said from exc
    if stamps is not None:
        check_unchanged(request, stamps)
    if progress is not None:
        progress("slowest frequency", share)
    try:
        prepared.slowest_frequency(uses_arap(request.solver, prepared))
    except np.linalg.LinAlgError as exc:  # the reduced mass matrix is singular: modes that repeat each other
        raise SubspaceError(
            f"the {request.subspace.modes} modes of '{request.object_name}' are not independent on a mesh of "
            f"{prepared.mesh.t} tets ({exc}); lower the number of modes or raise the tet resolution"
        ) from exc
    poses = request.poses
    if poses:

        def pose_progress(done: int, total: int) -> None:
            if progress is not None:
                progress(f"pose-space modes ({done}/{total} poses)", share + (1.0 - share) * done / max(total, 1))

        prepared.posespace = prepare_pose_space(
            prepared,
            np.array([pose.p for pose in poses]),
            frames=[pose.frame for pose in poses],
            contacts=[pose.contact for pose in poses],
            progress=pose_progress,
            cancelled=cancelled,
            reach=request.pose_reach,
            one_sided=[pose.one_sided for pose in poses],
        )
    if progress is not None:
        progress("done", 1.0)
    return prepared


def uses_arap(solver: SolverSettings, prepared: PreparedCharacter) -> bool:
    """Whether the simulation will use the ARAP energy (else linear co-rotational): the solver's own rule."""
    return simulator_uses_arap(solver.material_model, prepared.model)
