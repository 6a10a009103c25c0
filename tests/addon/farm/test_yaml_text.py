"""The job template's YAML: every value reads back as written, whatever its characters."""

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with openjd-model (requirements/main.txt, tests only)")


def test_every_form_reads_back_as_written(addon):
    value = {
        "name": 'Körper "L" \\ {{Task.Param.Shot}}: yes',
        "looks_like_other_types": ["yes", "1", "null", "true", "-3..5", "", "#x"],
        "numbers": [1, -2, 0.5],
        "flags": [True, False, None],
        "empty": {"list": [], "map": {}},
        "steps": [{"name": "Prepare", "args": ["-b", "--frames=-10..20"], "deps": [{"dependsOn": "Bake"}]}],
    }
    assert yaml.safe_load(addon.farm.yaml_text(value)) == value


def test_an_unknown_type_is_refused(addon):
    with pytest.raises(TypeError):
        addon.farm.yaml_text({"x": object()})
