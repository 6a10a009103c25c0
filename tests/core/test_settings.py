"""One definition of every setting (core/settings.py)."""

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


def test_core_settings_objects_take_their_defaults_from_the_one_definition():
    """Every field of core's settings objects named after a user setting defaults to that setting (exactly)."""
    from dataclasses import fields

    from core.pipeline import MaterialSettings, SolverSettings, SubspaceSettings
    from core.settings import BY_NAME, core_default

    seen = 0
    for cls in (SubspaceSettings, MaterialSettings, SolverSettings):
        for f in fields(cls):
            if f.name in BY_NAME:
                assert f.default == core_default(f.name), (cls.__name__, f.name)
                seen += 1
    assert seen >= 14  # a renamed field would silently stop being derived: keep the count honest


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
    }
    sub = SubspaceSettings(**core_values(SubspaceSettings, props.__getitem__))
    assert (sub.modes, sub.clusters, sub.tet_method, sub.loose_parts, sub.seed) == (24, 90, "lattice", "skip", 0)
    solver_props = {"substeps": 3, "iterations": 7, "stiffness_mode": "PHYSICAL", "wobble_hz": 2.0}
    values = core_values(SolverSettings, lambda n: solver_props.get(n, getattr(SolverSettings, n)))
    solver = SolverSettings(**values)
    assert (solver.iterations, solver.stiffness_mode, solver.simulation().max_iterations) == (7, "physical", 7)
    assert "fps" not in values and "tolerance" not in values  # not user settings: their own defaults stay
