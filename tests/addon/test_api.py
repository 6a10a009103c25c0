"""The Python API for technical directors (api.py), reachable as ``skinmodes_api`` however it was installed.

Settings are compared exactly (enums, ints) or with rel=1e-6 (float32 storage).
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest


def test_skinmodes_api_is_the_api_of_the_enabled_extension(addon, creature):
    import skinmodes_api as api

    obj, _, _ = creature
    assert api is addon.api and api.__name__ == f"{addon.__name__}.api"
    api.configure(obj, material_preset="jelly", modes=12, damping_ratio=0.5)
    s = api.settings(obj)
    assert (s.material_preset, s.modes) == ("CUSTOM", 12) and s.damping_ratio == pytest.approx(0.5, rel=1e-6)
    with pytest.raises(api.SkinmodesError, match="modes must lie in"):
        api.configure(obj, modes=0, wobble_hz=4.0)
    assert s.modes == 12 and s.wobble_hz == pytest.approx(1.5, rel=1e-6)  # nothing changed
    assert api.SETTABLE >= {"wobble_hz", "material_preset", "cache_dir"}


def test_compute_modes_and_bake_through_the_api(addon, creature, tmp_path):
    import bpy
    import skinmodes_api as api

    obj, _, _ = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    stats = api.compute_modes(obj)
    assert stats["modes"] == 8 and stats["tets"] > 0
    summary = api.bake(obj, frames=(1, 4), output="PC2")
    assert summary["frames"] == [1, 4] and summary["frames_baked"] == 4 and summary["output"] == "pc2"
    assert all(os.path.exists(f) for f in summary["files"])
    api.clear_bake(obj)
    assert obj.skinmodes.bake_kind == "" and not any(m.type == "MESH_CACHE" for m in obj.modifiers)


# Run in a fresh Blender with its own profile: the extension cannot be enabled from two repositories at once.
OTHER_REPOSITORY = textwrap.dedent(
    """
    import json, sys
    import bpy  # first: it puts Blender's own modules (addon_utils) on the path
    import addon_utils

    repo = bpy.context.preferences.extensions.repos.new(
        name="Studio", module="studio", custom_directory=sys.argv[-1], source="USER"
    )
    assert bpy.ops.extensions.package_install_files(
        filepath=sys.argv[-2], repo=repo.module, enable_on_install=True
    ) == {"FINISHED"}
    import skinmodes_api as api

    bpy.ops.mesh.primitive_cube_add()
    obj = bpy.context.active_object
    api.configure(obj, material_preset="rubber", modes=20)
    out = {
        "name": api.__name__,
        "settings": [obj.skinmodes.material_preset, obj.skinmodes.modes],
        "user_default": "bl_ext.user_default.skinmodes" in sys.modules,
    }
    addon_utils.disable("bl_ext.studio.skinmodes", default_set=True)
    out["alias_after_disable"] = "skinmodes_api" in sys.modules
    print("RESULT " + json.dumps(out), flush=True)
    """
)


def test_skinmodes_api_works_when_installed_from_another_repository(dev_zip, tmp_path):
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "profile"), OPENBLAS_NUM_THREADS="1")
    repo = tmp_path / "studio_repo"
    repo.mkdir()
    cmd = [sys.executable, "-c", OTHER_REPOSITORY, str(dev_zip), str(repo)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, out.stdout[-2000:] + out.stderr[-2000:]
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert result == {
        "name": "bl_ext.studio.skinmodes.api",
        "settings": ["RUBBER", 20],
        "user_default": False,
        "alias_after_disable": False,
    }


def test_training_poses_through_the_api(addon, creature):
    """set_poses replaces the list after checking every pair (nothing changes on a bad one); poses reads it."""
    import skinmodes_api as api

    obj, _, _ = creature
    obj.vertex_groups.new(name="crease")
    api.set_poses(obj, [(12, "auto"), (18, "crease"), (20, "NONE")])
    assert api.poses(obj) == [(12, "auto"), (18, "crease"), (20, "none")]
    for bad, message in (
        ([(12, "auto"), (12, "none")], "frame 12 is given twice"),
        ([(4.5, "auto")], "must be a whole number"),
        ([(4, "gone")], "neither 'auto', 'none' nor a vertex group"),
        ([(4,)], "a (frame, contact) pair"),
    ):
        with pytest.raises(api.SkinmodesError, match=message.replace("(", r"\(").replace(")", r"\)")):
            api.set_poses(obj, bad)
        assert api.poses(obj) == [(12, "auto"), (18, "crease"), (20, "none")]
    api.set_poses(obj, [])
    assert api.poses(obj) == []


def test_a_pose_contact_mode_through_the_api(addon, creature):
    """A third element sets the pose's Contact Mode (stick by default); poses gives back what set_poses takes,
    so the two round-trip; a bad mode changes nothing."""
    import skinmodes_api as api

    obj, _, _ = creature
    api.set_poses(obj, [(12, "auto"), (18, "auto", "One-Sided"), (20, "none", "stick")])
    assert [p.contact_mode for p in obj.skinmodes.poses] == ["STICK", "ONE_SIDED", "STICK"]
    assert api.poses(obj) == [(12, "auto"), (18, "auto", "one-sided"), (20, "none")]
    api.set_poses(obj, api.poses(obj))
    assert api.poses(obj) == [(12, "auto"), (18, "auto", "one-sided"), (20, "none")]
    with pytest.raises(api.SkinmodesError, match="must be 'stick' or 'one-sided'"):
        api.set_poses(obj, [(30, "auto", "slide")])
    assert api.poses(obj) == [(12, "auto"), (18, "auto", "one-sided"), (20, "none")]
