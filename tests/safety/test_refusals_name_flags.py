"""Issue 39, item 4: every refusal names a setting that exists on the surface the user is using.

Before: ``skinmodes gait`` on a larger mesh was refused with "a larger Search Copy (coarse_tets) ... can", a
name no surface has and a setting the ``gait`` command had no flag for.  Now messages name a setting as
"Label (setting_name)", the command line prints that as "Label (--setting-name)", and ``gait`` has a flag for
every gait setting.
"""

import re

from tests.addon.helpers import run_cli
from tests.addon.locomotion.conftest import slug  # noqa: F401 - the blob, requested by name


def gait_flags(addon):
    sub = next(a for a in addon.cli.parser()._subparsers._group_actions if a.dest == "command")
    return {s for action in sub.choices["gait"]._actions for s in action.option_strings}


def test_the_command_line_names_a_setting_by_its_flag(addon):
    line = "the copy cannot carry it; a larger Search Copy (gait_search_tets) or 0 (search the mesh itself) can"
    assert addon.cli.as_flags(line) == line.replace("(gait_search_tets)", "(--gait-search-tets)")
    assert addon.cli.as_flags("Wobble (wobble_hz) and (not_a_setting)") == "Wobble (--wobble-hz) and (not_a_setting)"


def test_the_gait_command_has_a_flag_for_every_gait_setting(addon):
    flags = gait_flags(addon)
    names = [s.name for s in addon.core.settings.SETTINGS if s.name.startswith("gait_")]
    short = addon.locomotion.command.SHORT_FLAGS
    for name in names:
        assert "--" + name.replace("_", "-") in flags or name in short.values(), name


def test_a_gait_search_copy_refusal_names_a_flag_the_command_has(addon, dev_zip, slug, tmp_path):  # noqa: F811
    import bpy

    shot = tmp_path / "slug.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(shot))
    # A 6-tet copy of the ~1,000-tet blob cannot carry its actuation modes: refused before any rollout.
    args = ("gait", "--blend", str(shot), "--object", "Slug", "--generations", "1", "--gait-search-tets", "6")
    out = run_cli(dev_zip, tmp_path, *args)
    assert out.returncode == 1, out.stdout[-2000:]
    line = out.stderr.strip().splitlines()[-1]
    assert "Search Copy (--gait-search-tets)" in line, line
    for flag in re.findall(r"\((--[a-z-]+)\)", line):
        assert flag in gait_flags(addon), (flag, line)
