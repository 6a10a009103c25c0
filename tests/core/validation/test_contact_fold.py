"""The folded-bar contact case (core/validation/contact_fold.py)."""

import numpy as np

from core.dynamics.simulator import SimulationSettings, Simulator
from core.validation.contact_fold import H, build_fold, folded, penetration


def test_the_fold_touches_on_both_arms_and_the_snap_never_penetrates_by_itself():
    """The fold's contact pairs sit on both arms at posed distance 0 (the grid is symmetric: exact),
    the snap leaves the rig at rest at t <= 0, and the rig's own penetration is never positive."""
    fold = build_fold(cells=2, m=6, r=20)
    X = fold.scene.mesh.X
    assert len(fold.left) > 0 and (X[fold.left, 0] < 2).all() and (X[fold.facing, 0] > 2).all()
    assert np.abs(fold.posed[fold.left] - fold.posed[fold.facing]).min() == 0.0
    assert np.array_equal(folded(0.0), folded()) and not np.array_equal(folded(0.1), folded())
    depth, rig = penetration(fold, Simulator(fold.rest, SimulationSettings(time_step=H)), steps=12)
    assert rig.max() <= 1e-12 and depth.shape == rig.shape == (12,)
