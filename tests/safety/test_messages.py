"""Issue 24, low item: a failure is named for what failed.

Before: a linear-algebra failure inside the simulation's step was reported as "the rig cannot be
inverted there ...; a bone or object scaled to 0?", sending the user to a rig that is fine.  The
failure is injected (the step raises LinAlgError), since a real solver breakdown is not reproducible
on the small creature; the message is compared by its words.
"""

import numpy as np
import pytest


def test_a_solver_failure_is_not_blamed_on_the_rig(addon, shot, monkeypatch):
    obj, _, _scene, _folder = shot

    def broken(self, frame):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(addon.session.Session, "offsets_local", broken)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, output="PC2", frames=(1, 4))
    line = str(err.value)
    assert "solver" in line and "scaled to 0" not in line and "rig" not in line and "\n" not in line, line
