"""Reconstruction (core/reconstruct.py)."""

import numpy as np
import pytest

from core.dynamics.reconstruct import Reconstructor
from core.model.materials import Material
from core.subspace.reduced import build_reduced_model
from core.validation.scenes import bar_scene


@pytest.fixture(scope="module")
def model():
    s = bar_scene(cells_per_unit=2, bones=3)
    return build_reduced_model(s.mesh, Material.uniform(s.mesh.t, 1e4, 0.2, 1000.0), s.rig, m=6, r=10)


def test_tet_vertices_reconstruct_with_the_model_basis(model):
    z = np.random.default_rng(0).standard_normal((4 * model.m, 3))
    rec = Reconstructor(model)
    u = rec.displacement(z)
    # u_a = sum_q W[a, q] T_q [Xn_a; 1], written out per mode.
    Xn = (model.X - model.centre) / model.scale
    T = z.reshape(model.m, 4, 3)
    ref = sum(model.weights[:, [q]] * (Xn @ T[q, :3] + T[q, 3]) for q in range(model.m))
    assert np.abs(u - ref).max() < 1e-12 * np.abs(ref).max()


def test_embedded_points_use_their_own_weights_and_rest_positions(model):
    rng = np.random.default_rng(1)
    # Midpoints of tet edges, with interpolated weights: exact for the linear W.
    T = model.T[:20]
    rest = 0.5 * (model.X[T[:, 0]] + model.X[T[:, 1]])
    w = 0.5 * (model.weights[T[:, 0]] + model.weights[T[:, 1]])
    z = rng.standard_normal((4 * model.m, 3))
    u = Reconstructor(model, w, rest).displacement(z)
    out = np.empty_like(u)
    Reconstructor(model, w, rest).displacement(z, out=out)
    assert np.array_equal(u, out)
    with pytest.raises(ValueError):
        Reconstructor(model, w, None)
