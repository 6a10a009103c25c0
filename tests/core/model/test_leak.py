"""Momentum-leak field (core/leak.py)."""

import numpy as np
import pytest

from core.errors import MeshError
from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import TetMesh
from core.model.leak import default_leak_field, validate_leak_field


@pytest.fixture(scope="module")
def mesh():
    return TetMesh.from_arrays(*box_tet_mesh((8, 8, 8)))


def test_default_field_leaks_at_the_surface_and_holds_the_core(mesh):
    d = default_leak_field(mesh)
    assert d.min() >= 0.0 and d.max() <= 1.0
    assert np.all(d[mesh.boundary_vertices()] == 0.0)
    centre = np.argmin(np.linalg.norm(mesh.X - 0.5, axis=1))
    assert d[centre] == pytest.approx(1.0)
    # Monotone from the surface inwards along a line through the centre.
    line = np.flatnonzero((np.abs(mesh.X[:, 1] - 0.5) < 1e-9) & (np.abs(mesh.X[:, 2] - 0.5) < 1e-9))
    line = line[np.argsort(mesh.X[line, 0])][: len(line) // 2 + 1]
    assert np.all(np.diff(d[line]) >= -1e-12)


def test_user_field_is_validated(mesh):
    with pytest.raises(MeshError, match="NaN"):
        validate_leak_field(np.full(mesh.n, np.nan), mesh.n)
    with pytest.raises(MeshError, match=r"\[0, 1\]"):
        validate_leak_field(np.full(mesh.n, 2.0), mesh.n)
    with pytest.raises(MeshError, match="one value per vertex"):
        validate_leak_field(np.ones(3), mesh.n)
    assert np.all(validate_leak_field(np.full(mesh.n, 0.5), mesh.n) == 0.5)


def test_a_mask_holds_keeps_or_frees_over_its_full_range(mesh):
    from core.model.leak import leak_from_mask

    d0 = default_leak_field(mesh)
    assert np.allclose(leak_from_mask(d0, np.zeros(mesh.n)), 1.0)  # 0: the flesh follows the rig
    assert np.allclose(leak_from_mask(d0, np.full(mesh.n, 0.5)), d0)  # 0.5: the depth field
    assert np.allclose(leak_from_mask(d0, np.ones(mesh.n)), 0.0)  # 1: the whole depth swings
    f = np.linspace(0.0, 1.0, 11)
    d = leak_from_mask(np.full(11, 0.6), f)
    assert np.all(np.diff(d) <= 1e-12) and d.min() >= 0.0 and d.max() <= 1.0  # monotone, in [0, 1]


def test_thin_unplanted_chains_are_appendages(mesh):
    """A box with three bones along x: a thick root, a thin tail beyond it, and a leg that is held."""
    from core.model.leak import appendage_bones, automatic_mask, surface_depth

    depth = surface_depth(mesh)
    assert np.all(depth[mesh.boundary_vertices()] == 0.0) and depth.max() > 0
    x = mesh.X[:, 0]
    W = np.stack([x < 0.4, (x >= 0.4) & (x < 0.7), x >= 0.7], axis=1).astype(float)
    # Fake depths: the root's flesh is deep, bones 1 and 2 are thin.
    fake = np.where(x < 0.4, depth.max(), 0.1 * depth.max())
    parents = np.array([-1, 0, 0])
    assert appendage_bones(W, parents, fake).tolist() == [False, True, True]
    grounded = np.array([False, False, True])  # bone 2 ends on the ground: a leg, not a tail
    assert appendage_bones(W, parents, fake, grounded).tolist() == [False, True, False]
    f = automatic_mask(W, np.array([False, True, False]))
    assert np.allclose(f[W[:, 1] == 1], 1.0) and np.allclose(f[W[:, 0] == 1], 0.5)


def test_trunks_that_branch_and_legs_of_ik_rigs_are_not_appendages():
    """Five bones on a line of vertices: root 0, spine 1 (children 2 and 3), tail 2, leg 3 and an IK foot 4
    hanging from the root next to the leg's end."""
    from core.model.leak import appendage_bones

    X = np.c_[np.arange(10.0), np.zeros(10), np.zeros(10)]
    W = np.zeros((10, 5))
    W[np.arange(10), [0, 0, 1, 1, 2, 2, 3, 3, 3, 4]] = 1.0  # the foot (vertex 9) is the leg's neighbour
    depth = np.full(10, 0.1)
    depth[0] = 1.0  # only the root is thick
    parents = np.array([-1, 0, 1, 1, 0])
    assert appendage_bones(W, parents, depth).tolist() == [False, False, True, True, True]
    grounded = np.array([False, False, False, False, True])
    # Reach: 5 % of the 9-unit diagonal is 0.45 < 1: the leg's flesh is not next to the foot's.
    assert appendage_bones(W, parents, depth, grounded, X, np.array([9])).tolist() == [False] * 2 + [True, True, False]
    X[9, 0] = 8.2  # now within reach of vertex 8, the leg's
    assert appendage_bones(W, parents, depth, grounded, X, np.array([9])).tolist() == [False, False, True, False, False]


def test_swing_softening_caps_an_appendage_swing_and_leaves_the_body():
    """A short stiff end bone is softened until its swing's quotient is at most SWING_CAP^2 lambda_0."""
    from core.model.fem import corotational_weight_space_hessian, lumped_mass
    from core.model.leak import SWING_CAP, swing_softening
    from core.model.materials import Material
    from core.validation.scenes import bar_scene

    s = bar_scene(cells_per_unit=3, bones=5)
    mat = Material.uniform(s.mesh.t, 2e4, 0.3, 1000.0)
    masses = lumped_mass(s.mesh, mat.density)
    w = s.rig.weights[:, [-1]]
    H = corotational_weight_space_hessian(s.mesh, mat.mu, mat.lam)
    q0 = float(w[:, 0] @ (H @ w[:, 0]) / (masses @ w[:, 0] ** 2))
    slowest = q0 / 10.0  # the end bone swings at sqrt(10) x the slowest frequency
    f = swing_softening(s.mesh, mat, masses, w, slowest)
    assert f.shape == (s.mesh.t,) and np.all(f > 0) and np.all(f <= 1)
    assert np.all(f[w[s.mesh.T].max(axis=1)[:, 0] == 0] == 1.0)
    Hs = corotational_weight_space_hessian(s.mesh, mat.mu * f, mat.lam * f)
    q = float(w[:, 0] @ (Hs @ w[:, 0]) / (masses @ w[:, 0] ** 2))
    assert q <= 1.25 * SWING_CAP**2 * slowest  # refined a fixed number of rounds, from 10 x above
    assert np.all(swing_softening(s.mesh, mat, masses, w, 2.0 * q0) == 1.0)  # slow enough already: untouched


def test_appendage_chains_name_each_chain_by_its_first_bone():
    from core.model.leak import appendage_chains

    parents = np.array([-1, 0, 1, 2, 0, 4])
    appendage = np.array([False, True, True, True, False, True])
    assert list(appendage_chains(parents, appendage)) == [-1, 1, 1, 1, -1, 5]
