"""The job template: one Prepare task per character, bakes in rounds so no shot saves twice at once, and
a document the OpenJD model library decodes into the tasks meant."""

from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML comes with openjd-model (requirements/main.txt, tests only)")
model = pytest.importorskip("openjd.model", reason="openjd-model is in requirements/main.txt (tests only)")


def tasks(addon):
    T = addon.farm.BakeTask
    a, b = "a" * 64, "b" * 64
    rows = [("s1", "Creature", a), ("s2", "Creature", a), ("s2", "Blob", b), ("s3", "Blob", b)]
    return [T(f"/s/{shot}.blend", name, key) for shot, name, key in rows]


def test_one_prepare_per_character_and_bakes_in_rounds(addon):
    template = addon.farm.template
    rows = tasks(addon)
    assert [(t.shot, t.object) for t in template.characters(rows)] == [
        ("/s/s1.blend", "Creature"),
        ("/s/s2.blend", "Blob"),
    ]
    rounds = template.bake_rounds(rows)
    assert [[(t.shot, t.object) for t in r] for r in rounds] == [
        [("/s/s1.blend", "Creature"), ("/s/s2.blend", "Creature"), ("/s/s3.blend", "Blob")],
        [("/s/s2.blend", "Blob")],
    ]


def test_the_template_decodes_into_the_tasks_meant(addon, tmp_path):
    doc = yaml.safe_load(addon.farm.yaml_text(addon.farm.job_template(tasks(addon), "cache", "blender", (-3, 5))))
    decoded = model.decode_job_template(template=doc)
    values = model.preprocess_job_parameters(
        job_template=decoded, job_parameter_values={}, job_template_dir=tmp_path, current_working_dir=tmp_path
    )
    assert Path(values["CacheDir"].value) == tmp_path / "cache"  # the default: the bundle's own folder
    job = model.create_job(job_template=decoded, job_parameter_values=values)
    steps = {s.name: s for s in job.steps}
    assert list(steps) == ["Prepare", "Bake", "Bake 2", "Report"]
    assert [d.dependsOn for d in steps["Bake"].dependencies] == ["Prepare"]
    assert [d.dependsOn for d in steps["Bake 2"].dependencies] == ["Bake"]
    assert [d.dependsOn for d in steps["Report"].dependencies] == ["Bake 2"]
    space = list(model.StepParameterSpaceIterator(space=steps["Prepare"].parameterSpace))
    assert sorted(t["Character"].value for t in space) == ["a" * 16, "b" * 16]
    bakes = {
        (t["Shot"].value, t["Object"].value)
        for t in model.StepParameterSpaceIterator(space=steps["Bake"].parameterSpace)
    }
    assert bakes == {("/s/s1.blend", "Creature"), ("/s/s2.blend", "Creature"), ("/s/s3.blend", "Blob")}
    args = steps["Bake"].script.actions.onRun.args
    assert (
        "--prepared-only" in args and "--frames=-3..5" in args and args[:4] == ["-b", "--command", "skinmodes", "bake"]
    )


def test_parameter_values_are_the_deadline_cloud_form(addon):
    values = addon.farm.parameter_values("/farm/cache", "/opt/blender/blender")
    assert values == {
        "parameterValues": [
            {"name": "CacheDir", "value": "/farm/cache"},
            {"name": "Blender", "value": "/opt/blender/blender"},
        ]
    }
