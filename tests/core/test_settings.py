"""One definition of every setting (core/settings.py)."""

from pathlib import Path

import numpy as np
import pytest

from core.settings import BY_NAME, PRESETS, SETTINGS, SettingError, names, validate_all


def test_every_setting_is_complete_and_its_default_valid():
    seen = set()
    for st in SETTINGS:
        assert st.name not in seen
        seen.add(st.name)
        assert st.label and st.description and "\n" not in st.description
        assert st.stage in ("character", "solver", "output", "ui")
        assert st.validate(st.default) == st.default
        if st.minimum is not None and st.maximum is not None:
            assert st.minimum <= st.maximum


def test_presets_name_real_settings_inside_their_ranges():
    for values in PRESETS.values():
        assert validate_all(values) == pytest.approx(values)


@pytest.mark.parametrize(
    "name,value,fragment",
    [
        ("modes", 0, "modes must lie in [1, 128]"),
        ("youngs_modulus", -1e4, "youngs_modulus must lie in [10, 1e+09]"),
        ("substeps", 0, "substeps must lie in [1, 32]"),
        ("substeps", 2.5, "whole number"),
        ("wobble_hz", float("nan"), "wobble_hz must lie in"),
        ("tet_method", 3, "tet_method must be one of auto, lattice, wildmeshing"),
        ("output", "movie", "output must be one of pc2, shape_keys"),
        ("cache_dir", 5, "cache_dir must be text"),
    ],
)
def test_out_of_range_values_are_refused_naming_the_setting_and_range(name, value, fragment):
    with pytest.raises(SettingError, match=fragment.replace("[", r"\[").replace("+", r"\+")):
        BY_NAME[name].validate(value)


def test_slider_ends_stored_as_float32_are_accepted():
    st = BY_NAME["poisson_ratio"]
    assert st.validate(float(np.float32(st.maximum))) == pytest.approx(st.maximum, rel=1e-6)
    assert BY_NAME["damping_ratio"].validate(float(np.float32(0.0))) == 0.0


def test_validate_all_checks_everything_before_returning():
    with pytest.raises(SettingError, match="unknown setting"):
        validate_all({"modes": 8, "bogus": 1})
    with pytest.raises(SettingError, match="clusters"):
        validate_all({"modes": 8, "clusters": -1})
    assert validate_all({"tet_method": "lattice", "modes": 8.0}) == {"tet_method": "LATTICE", "modes": 8}


def test_stages_partition_the_settings():
    stages = [names(s) for s in ("character", "solver", "output", "ui")]
    assert sorted(sum(stages, ())) == sorted(names())
    assert "wobble_hz" in names("solver") and "modes" in names("character")
    assert [s.name for s in SETTINGS if s.animatable] == ["wobble_hz", "damping_ratio"]


# Character settings the add-on reads itself, into the CharacterInput (painted masks, planted
# flags) or the cache folder, rather than into one of core's settings objects.
READ_BY_THE_ADDON = {
    "stiffness_group",
    "density_group",
    "leak_mode",
    "leak_group",
    "rigid_group",  # read into CharacterInput.rigid when Rigid Pieces is Vertex Group (issue 37)
    "planted_feet",
    "whole_character",  # which meshes the add-on reads into one body (issue 38)
    "cache_dir",
    "subspace_method",  # which drive an object rig gets (issue 27), chosen where the session builds it
    "pose_local_blend",  # the pose-space RBF's local support (issue 29), passed to prepare_pose_space as reach
}


def _setting_fields(cls) -> set[str]:
    from dataclasses import fields

    return {f.name for f in fields(cls) if f.name in BY_NAME}


def test_core_settings_objects_hold_exactly_the_settings_of_their_stage():
    """Each user setting reaches core by name, exactly once per stage: every solver setting is a field of
    SolverSettings, and every character setting a field of SubspaceSettings or MaterialSettings or one
    the add-on reads itself.  A renamed field, or a new setting no object takes, fails here."""
    from core.pipeline import MaterialSettings, SolverSettings, SubspaceSettings

    solver, subspace, material = (_setting_fields(c) for c in (SolverSettings, SubspaceSettings, MaterialSettings))
    assert solver == set(names("solver"))
    character = set(names("character"))
    assert subspace | (material & character) | READ_BY_THE_ADDON == character
    assert not (subspace & READ_BY_THE_ADDON) and not (material & READ_BY_THE_ADDON)
    # The base material the modes are built with: the character's Poisson ratio, and the physical
    # units of the solver's material (the ratio of the two scales the motion, core.pipeline.physical_scale).
    assert material == {"poisson_ratio", "youngs_modulus", "density"}


def test_core_settings_objects_take_their_defaults_from_the_one_definition():
    """Every field of core's settings objects named after a user setting defaults to that setting (exactly)."""
    from dataclasses import fields

    from core.pipeline import MaterialSettings, SolverSettings, SubspaceSettings
    from core.settings import core_default

    for cls in (SubspaceSettings, MaterialSettings, SolverSettings):
        for f in fields(cls):
            if f.name in BY_NAME:
                assert f.default == core_default(f.name), (cls.__name__, f.name)


def test_the_shipped_preset_files_are_written_from_the_presets():
    """The add-on's Blender preset files (what the Preset menu runs) are exactly core's presets in the
    format "Add Preset" writes: a shipped file edited by hand, or a preset changed without its file, fails."""
    from core.settings import PRESET_LABELS, PRESET_SUBDIR, preset_file_text, read_preset

    folder = Path(__file__).resolve().parents[2] / "skinmodes_addon" / "presets" / PRESET_SUBDIR
    assert sorted(p.name for p in folder.glob("*.py")) == sorted(f"{label}.py" for label in PRESET_LABELS.values())
    for pid, label in PRESET_LABELS.items():
        path = folder / f"{label}.py"
        assert path.read_text(encoding="utf-8") == preset_file_text(pid), f"rewrite {path} from preset_file_text"
        assert read_preset(path) == {"material_preset": pid, **PRESETS[pid]}


def test_core_values_reads_settings_by_name_and_lowers_enum_ids():
    from core.pipeline import SolverSettings, SubspaceSettings
    from core.settings import core_values

    props = {
        "modes": 24,
        "clusters": 90,
        "target_tets": 9000,
        "tet_method": "LATTICE",
        "loose_parts": "SKIP",
        "swing_appendages": False,
        "rigid_pieces": "ALL",
    }
    sub = SubspaceSettings(**core_values(SubspaceSettings, props.__getitem__))
    assert (sub.modes, sub.clusters, sub.tet_method, sub.loose_parts, sub.seed) == (24, 90, "lattice", "skip", 0)
    assert sub.rigid_pieces == "all"
    solver_props = {"substeps": 3, "iterations": 7, "stiffness_mode": "PHYSICAL", "wobble_hz": 2.0}
    values = core_values(SolverSettings, lambda n: solver_props.get(n, getattr(SolverSettings, n)))
    solver = SolverSettings(**values)
    assert (solver.iterations, solver.stiffness_mode, solver.simulation().max_iterations) == (7, "physical", 7)
    assert "fps" not in values and "tolerance" not in values  # not user settings: their own defaults stay


def test_contact_kinds_keep_their_order_and_core_takes_the_automatic_one_in_lower_case():
    """Blender stores a pose's contact by its index in these items: append, never reorder."""
    from core.settings import CONTACT_AUTO, CONTACT_GROUP, CONTACT_KINDS, CONTACT_NONE

    assert [c.id for c in CONTACT_KINDS] == [CONTACT_AUTO, CONTACT_GROUP, CONTACT_NONE] == ["AUTO", "GROUP", "NONE"]
    assert all(c.label and c.description for c in CONTACT_KINDS)
