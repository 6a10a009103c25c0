"""A reduced model whose every part answers the rig at the Wobble (issue 37): modes, part responses,
calibrated stiffness, and the model's Wobble frequency.

What the seed builds (:func:`core.subspace.reduced.build_reduced_model`) and what is added here:

1. the skinning eigenmodes of the material as given (the seed's, unchanged);
2. the parts' weight-space responses (:func:`core.subspace.flesh.response_weights`) with the stiffness
   calibrated on them (:data:`core.subspace.flesh.WEIGHT_ROUNDS` rounds), joined to the modes
   (:func:`core.subspace.flesh.add_weights`) and the whole set re-diagonalised for the calibrated
   stiffness (Rayleigh-Ritz: the span, hence J_w W = 0, is kept);
3. clusters on those weights, then :data:`core.subspace.flesh.REDUCED_ROUNDS` rounds of the same
   calibration on the reduced model itself (the products rebuilt for each round's stiffness);
4. the parts' common reduced sag, stored as ``ReducedModel.reference_sag``: the Wobble setting maps
   omega_ref = 1 / sqrt(reference_sag) to its frequency (:meth:`ReducedModel.wobble_frequency`).

The modes come from the uncalibrated material on purpose: an eigensolve on a material whose stiffness
varies by orders of magnitude finds spurious modes on a few soft tets (measured: weights living on
1-3 vertices, a singular mass matrix); responses are solves, smooth whatever the contrast.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..geometry.tetmesh import TetMesh
from ..model.fem import corotational_weight_space_hessian, lumped_mass
from ..model.fibers import Fibers
from ..model.leak import default_leak_field, validate_leak_field
from ..model.materials import Material
from ..model.parts import Parts
from ..model.rig import Rig
from .clusters import skinning_clusters
from .flesh import (
    FLOOR,
    FLOOR_ROUNDS,
    REDUCED_ROUNDS,
    WEIGHT_ROUNDS,
    add_weights,
    calibrate,
    constrained_solver,
    part_surfaces,
    raise_floor,
    reduced_sags,
    reference,
    response_weights,
    slow_modes,
    tet_factors,
    weight_space_sags,
)
from .reduced import ReducedModel, assemble_model
from .skinning_modes import free_vertices, ritz, skinning_eigenmodes, weight_space_basis


def scaled(material: Material, factors: np.ndarray) -> Material:
    """The material with its stiffness (mu and lambda) scaled per tet by factors (t,)."""
    return replace(material, mu=material.mu * factors, lam=material.lam * factors)


def build_flesh_model(
    mesh: TetMesh,
    material: Material,
    rig: Rig | None,
    m: int,
    r: int,
    parts: Parts,
    leak: np.ndarray | None = None,
    seed: int = 0,
    held: np.ndarray | None = None,
    fibers: Fibers | None = None,
) -> ReducedModel:
    """The reduced model of the module doc: m weights, the slowest Ritz vectors of m eigenmodes and the parts'
    responses together.

    Arguments as :func:`core.subspace.reduced.build_reduced_model`; parts: :func:`core.model.parts.body_parts`;
    fibers: the tets' fibers along their bones (:func:`core.model.fibers.tet_fibers`), None for none.
    The returned model's ``mu``/``lam`` are the calibrated stiffness, ``reference_sag`` its Wobble reference
    and ``timings`` the stages' seconds (``calibration`` included).
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    masses = lumped_mass(mesh, material.density)
    d = default_leak_field(mesh) if leak is None else validate_leak_field(leak, mesh.n)
    modes = skinning_eigenmodes(mesh, material, masses, rig, d, m, held=held)
    timings["modes"] = modes.seconds
    t0 = time.perf_counter()
    free = free_vertices(mesh.n, held)
    Y = weight_space_basis(mesh.X, rig, masses, d, free=free)
    surfaces = part_surfaces(mesh, parts)

    def solver(mat: Material) -> Callable[[np.ndarray], np.ndarray]:
        return constrained_solver(corotational_weight_space_hessian(mesh, mat.mu, mat.lam), masses, Y, mesh.X, free)

    def weight_space(factors: np.ndarray) -> np.ndarray:
        return weight_space_sags(response_weights(solver(scaled(material, factors)), masses, parts.carried), surfaces)

    logs, _, history = calibrate(mesh, parts, weight_space, np.zeros(parts.count), WEIGHT_ROUNDS)
    mat = scaled(material, tet_factors(mesh, parts, logs))
    Hw = corotational_weight_space_hessian(mesh, mat.mu, mat.lam)
    solve = solver(mat)
    # Each part's sag, then each thin part's own load: a weight of 1 along a tail or an ear, whose 12 affine
    # dofs hold its rigid swing about its root, exactly at any angle (a sag shape alone bends it, and a linear
    # blend of rotations shortens what it turns: tails stretched 10-50 % without it).
    own = parts.loads[:, parts.thin] * (1.0 if free is None else np.isin(np.arange(mesh.n), free)[:, None])
    candidates = np.concatenate([response_weights(solve, masses, parts.carried), own], axis=1)
    W = add_weights(modes.weights, candidates, masses, Y, mesh.X)
    # The Modes setting stays the budget (the step's cost goes as (12 m)^2 to (12 m)^3): of the modes and the
    # responses together, the m slowest Ritz vectors of the calibrated flesh are kept, the best m-weight
    # subspace of that span for its slow motion.  Keeping all of them (16 + up to 24 weights) made the
    # real characters' step 3-6 x slower for the same soft-region response (measured, docs/where_it_moves.md).
    weights, eigenvalues = ritz(W, Hw, masses)
    weights, eigenvalues = weights[:, :m], eigenvalues[:m]
    labels = skinning_clusters(weights, eigenvalues, mesh.T, mesh.volumes, r, seed=seed)
    arap = not bool(np.any(material.lam > 0))

    # Calibrated on the flesh alone, the fibers left out: they stiffen a bone's flesh along the bone only, and
    # calibrated with them the flesh was softened until it sheared as much as it had stretched (ears and tail
    # segments 19-24 % longer at the default Wobble; without: 3-11 %, the soft regions' sag 0.7-1.2 of asked).
    def reduced(factors: np.ndarray) -> np.ndarray:
        model = assemble_model(mesh, scaled(material, factors), masses, d, rig, weights, eigenvalues, labels)
        return reduced_sags(model, arap, parts.carried, surfaces)

    logs, sags, more = calibrate(mesh, parts, reduced, logs, REDUCED_ROUNDS)
    # The floor (core/subspace/flesh.py, slow_modes): each round one assembly, read for its modes and its sags.
    model = assemble_model(
        mesh, scaled(material, tet_factors(mesh, parts, logs)), masses, d, rig, weights, eigenvalues, labels
    )
    for _ in range(FLOOR_ROUNDS):
        ref, _ = reference(sags)
        if not ref > 0.0:
            break
        target = FLOOR / np.sqrt(ref)
        omega, shares = slow_modes(model, arap, parts.loads, parts.carried, target)
        # A little past the floor: the reference moves as the stiffened parts stop sagging.
        lifted = raise_floor(logs, omega, shares, 1.05 * target)
        if np.array_equal(lifted, logs):
            break
        logs = lifted
        model = assemble_model(
            mesh, scaled(material, tet_factors(mesh, parts, logs)), masses, d, rig, weights, eigenvalues, labels
        )
        sags = reduced_sags(model, arap, parts.carried, surfaces)
    timings["calibration"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    final = scaled(material, tet_factors(mesh, parts, logs))
    model = assemble_model(mesh, final, masses, d, rig, weights, eigenvalues, labels, fibers)
    model.reference_sag, model.part_sags = reference(sags)
    model.calibration = np.asarray(history + more)
    timings["products"] = time.perf_counter() - t0
    model.timings = timings
    return model
