"""Issue 12, item 10: validation is a contract, through the Python API and the command line.

Before: ``api.configure`` silently clamped out-of-range values (modes 0 -> 1,
Young's modulus -1e4 -> 10, sub-steps 0 -> 1; the CLI too), and a bad enum
raised a raw ``TypeError`` after earlier values were already applied.  Now
each is refused in one line naming the setting and its range, and nothing
changes: every property of the object (hidden ones too) and the .blend's bytes.
"""

import pytest

from tests.addon.helpers import settings_fingerprint
from tests.safety.conftest import run_command

# (values, what the line must say): out of range, wrong kind, bad enum after a good value, unknown name.
BAD = [
    ({"modes": 0}, "modes must lie in [1, 128], got 0"),
    ({"youngs_modulus": -1e4}, "youngs_modulus must lie in"),
    ({"substeps": 0}, "substeps must lie in [1, 32], got 0"),
    ({"wobble_hz": 4.0, "tet_method": "bogus"}, "tet_method must be one of auto, lattice, wildmeshing"),
    ({"damping_ratio": 0.3, "tet_method": 7}, "tet_method must be one of"),
    ({"modes": 2.5}, "modes must be a whole number"),
    ({"reset_at_cuts": "yes"}, "reset_at_cuts must be true or false"),
    ({"wobble": 3.0}, "unknown setting(s) wobble"),
]


@pytest.mark.parametrize(("values", "said"), BAD, ids=[str(v) for v, _ in BAD])
def test_the_api_refuses_in_one_line_and_changes_nothing(addon, creature, values, said):
    obj, _arm, _scene = creature
    before = settings_fingerprint(obj)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.configure(obj, **values)
    line = str(err.value)
    assert "\n" not in line and said in line, line
    assert settings_fingerprint(obj) == before


# (flags, what the last line must say, exit code): 1 for a value out of range, 2 for usage (argparse).
CLI_BAD = [
    (("--modes", "0"), "skinmodes: error: modes must lie in [1, 128], got 0", 1),
    (("--youngs-modulus", "-1e4"), "skinmodes: error: youngs_modulus must lie in", 1),
    (("--substeps", "0"), "skinmodes: error: substeps must lie in [1, 32], got 0", 1),
    (("--wobble-hz", "4", "--tet-method", "bogus"), "skinmodes: usage error: argument --tet-method", 2),
    (("--reset-at-cuts", "maybe"), "skinmodes: usage error: argument --reset-at-cuts", 2),
]


def test_the_command_refuses_in_one_line_and_leaves_the_blend_as_it_was(installed, tmp_path):
    """Each in its own process; a value accepted after them shows the flags do reach the settings."""
    import bpy

    from tests.safety import faults

    name, folder = installed
    blend = folder / "shot.blend"
    before = blend.read_bytes()
    for flags, said, code in CLI_BAD:
        out = run_command(tmp_path, "bake", "--blend", str(blend), "--object", name, *flags)
        assert out.returncode == code, (flags, out.stderr)
        assert faults.last_line(out.stderr).startswith(said), (flags, out.stderr)
        assert not any(line.startswith("skinmodes: meshing") for line in out.stderr.splitlines())  # before work
        assert blend.read_bytes() == before
    out = run_command(
        tmp_path, "bake", "--blend", str(blend), "--object", name, "--reset-at-cuts", "true", "--frames", "1-3"
    )
    assert out.returncode == 0, out.stderr
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    assert bpy.data.objects[name].skinmodes.reset_at_cuts is True  # the boolean flag reached the setting


def test_set_poses_refuses_a_frame_blender_cannot_hold_and_keeps_the_poses(addon, creature):
    """Issue 24, item 6.  Before: (2**31, 'auto') wiped the user's poses, then raised a raw ValueError."""
    obj, _arm, _scene = creature
    addon.api.set_poses(obj, [(40, "auto")])
    before = settings_fingerprint(obj), addon.api.poses(obj)
    for new in ([(12, "auto"), (2**31, "auto")], [(12, "auto"), (-(10**7), "none")], [(12.0, "auto")]):
        with pytest.raises(addon.core.errors.SkinmodesError) as err:
            addon.api.set_poses(obj, new)
        assert "\n" not in str(err.value) and "frame" in str(err.value), str(err.value)
        assert (settings_fingerprint(obj), addon.api.poses(obj)) == before


# (frames, output, what the line must say): wrong shapes and types, fractions, frames Blender cannot show.
BAKE_BAD = [
    ((1,), None, "frames must be a (start, end) pair"),
    (("a", "b"), None, "the start frame must be a whole number"),
    ("1-5", None, "frames must be a (start, end) pair"),
    ((1.5, 3), None, "the start frame must be a whole number, got 1.5"),
    ((1, 2**31), None, "the end frame 2147483648 is outside Blender's frames"),
    ((1, 6), 5, "output must be 'PC2' or 'SHAPE_KEYS'"),
]


@pytest.mark.parametrize(("frames", "output", "said"), BAKE_BAD, ids=[repr(b[:2]) for b in BAKE_BAD])
def test_api_bake_refuses_bad_arguments_in_one_line_and_changes_nothing(addon, shot, frames, output, said):
    """Before: raw tracebacks (IndexError, ValueError, AttributeError), and (1.5, 3) baked from frame 1."""
    import bpy

    from tests.addon.helpers import disk_fingerprint, full_fingerprint

    obj, _arm, _scene, folder = shot
    before = full_fingerprint(bpy, obj), disk_fingerprint(folder)
    with pytest.raises(addon.core.errors.SkinmodesError) as err:
        addon.api.bake(obj, frames=frames, output=output)
    assert "\n" not in str(err.value) and said in str(err.value), str(err.value)
    assert (full_fingerprint(bpy, obj), disk_fingerprint(folder)) == before


def test_the_command_refuses_a_huge_pose_frame_in_one_line(installed, tmp_path):
    """Before: ``--pose 99999999999`` printed "unexpected ValueError"."""
    from tests.safety import faults

    name, folder = installed
    blend = folder / "shot.blend"
    before = blend.read_bytes()
    out = run_command(tmp_path, "bake", "--blend", str(blend), "--object", name, "--pose", "99999999999")
    assert out.returncode == 1, out.stderr
    line = faults.last_line(out.stderr)
    assert line.startswith("skinmodes: error: a training pose's frame 99999999999 is outside"), line
    assert blend.read_bytes() == before
