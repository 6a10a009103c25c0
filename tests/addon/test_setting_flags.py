"""A setting's command-line flag (skinmodes_addon/setting_flags.py), the one way every subcommand makes it."""

import argparse

import pytest


def parser_with(addon, *names):
    p = argparse.ArgumentParser(exit_on_error=False)
    for name in names:
        addon.setting_flags.add_setting_flag(p, addon.core.settings.BY_NAME[name])
    return p


def test_each_kind_reads_its_own_values(addon):
    p = parser_with(addon, "wobble_hz", "modes", "reset_at_cuts", "tet_method", "leak_group")
    got = p.parse_args(["--wobble-hz", "4.5", "--modes", "12", "--reset-at-cuts", "off", "--tet-method", "lattice"])
    assert (got.wobble_hz, got.modes, got.reset_at_cuts, got.tet_method) == (4.5, 12, False, "lattice")
    assert got.leak_group is None  # unset: the object's own value stays
    with pytest.raises(argparse.ArgumentError, match="expected true or false"):
        p.parse_args(["--reset-at-cuts", "maybe"])


def test_the_help_is_the_settings_own_description_and_range(addon):
    st = addon.core.settings.BY_NAME["wobble_hz"]
    text = " ".join(parser_with(addon, "wobble_hz").format_help().split())
    assert " ".join(f"{st.description} {st.range_text()}".split()) in text


def test_the_gait_command_and_bake_make_their_flags_alike(addon):
    """The gait command's search settings come through the same function as bake's (they were re-spelled
    there, without the bool reader or the escaping argparse needs for "%")."""
    sub = next(a for a in addon.cli.parser()._subparsers._group_actions if a.dest == "command")
    gait = {a.dest: a for a in sub.choices["gait"]._actions}
    bake = {a.dest: a for a in sub.choices["bake"]._actions}
    for name in ("gait_search_tets", "gait_modes", "gait_period_min", "gait_travel"):
        assert (gait[name].type, gait[name].choices, gait[name].help) == (
            bake[name].type,
            bake[name].choices,
            bake[name].help,
        ), name
