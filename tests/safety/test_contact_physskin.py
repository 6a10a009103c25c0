"""Issue 29 item 3 with Physics Skin (issue 30 item 4): the colliders never make the physics skin explode.

The physics skin is solved per frame (quasi-static), so a collider "moving fast" is one that is deep
inside the flesh at a frame.  The scene is core's: the 4 m limb (1 m thick) of tests/core/physskin on
two bones, its end (bound to bone 1 alone) soft (Pin Rigidly Bound off), so these run without Blender.
"Bounded": finite, no tet inverted, the pins exactly on their bones, and no vertex moved further than
the deepest vertex lay inside an obstacle (the penalty pushes the flesh out, never beyond).  Where the
rig itself holds flesh inside (a limb starting inside a box, a bone pushed through one), the rig wins at
the pins and the free flesh is pushed towards the nearest face: stretched, not exploded.
"""

import numpy as np
import pytest

from core.contact.colliders import MeshCollider
from core.geometry.tetmesh import signed_volumes
from tests.core.contact.scenes import box
from tests.core.physskin.test_rig import soft_end, twist
from tests.core.physskin.test_solve import cylinder

CASES = {
    "scaled to zero": lambda: [MeshCollider(np.tile([[3.5, 0.0, 0.0]], (8, 1)), box([0, 0, 0], [1, 1, 1]).F)],
    "starting inside": lambda: [box([-1.0, -2.0, -2.0], [6.0, 2.0, 2.0])],
    "fast, past the bone": lambda: [box([3.2, -0.4, -1.0], [5.0, 2.0, 1.0])],
    "thin": lambda: [box([3.4, -2.0, -2.0], [3.45, 2.0, 2.0])],
    "two squeezing": lambda: [box([3.2, 0.2, -1.0], [5.0, 2.0, 1.0]), box([3.2, -2.0, -1.0], [5.0, -0.2, 1.0])],
}


@pytest.fixture(scope="module")
def limb():
    mesh = cylinder(4)
    phys, _ = soft_end(mesh, pin_rigid=False)
    return mesh, phys, phys.positions(twist(0.0))


def deepest(obstacles, x):
    """How deep (m) the deepest vertex of x (n, 3) lies inside any of the obstacles."""
    return max(float(np.maximum(o.planes(x, 0.0).depth(x), 0.0).max(initial=0.0)) for o in obstacles)


@pytest.mark.parametrize("case", list(CASES))
def test_a_collider_case_is_bounded(limb, case):
    mesh, phys, plain = limb
    obstacles = CASES[case]()
    x = phys.positions(twist(0.0), obstacles)
    assert np.isfinite(x).all()
    assert (signed_volumes(x, mesh.T) > 0.0).all()
    assert np.array_equal(x[phys.skin.pins], plain[phys.skin.pins])
    assert np.abs(x - plain).max() <= deepest(obstacles, plain) + 0.01


def test_a_collider_scaled_to_zero_touches_nothing(limb):
    _, phys, plain = limb
    assert np.abs(phys.positions(twist(0.0), CASES["scaled to zero"]()) - plain).max() <= 1e-12
