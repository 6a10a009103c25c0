"""Issue 28's Flamenco note: the job type ``skinmodes_bake.js``, run in a real JavaScript engine with a small
stand-in for Flamenco's ``author`` API, compiles the job ``flamenco_job`` writes into tasks whose commands
equal the OpenJD template's, task for task, and whose dependencies keep Prepare -> Bake and one shot's bakes
apart."""

import json
import shutil
import subprocess

import pytest

# Flamenco's job compiler API as far as the job type uses it: tasks record their commands and dependencies.
FAKE_AUTHOR = """
var author = {
    Task: function (name, type) {
        return {
            name: name, type: type, commands: [], deps: [],
            addCommand: function (c) { this.commands.push(c); },
            addDependency: function (t) { this.deps.push(t.name); },
        };
    },
    Command: function (type, params) { return { type: type, params: params }; },
};
function compiled(settingsText) {
    var tasks = [];
    compileJob({ settings: JSON.parse(settingsText), addTask: function (t) { tasks.push(t); } });
    return JSON.stringify(tasks.map(function (t) {
        return { name: t.name, type: t.type, commands: t.commands, deps: t.deps };
    }));
}
"""


def compile_job(script, settings):
    """The tasks compileJob makes of ``settings``: [{name, type, commands: [{type, params}], deps}]."""
    call = f"compiled({json.dumps(json.dumps(settings))})"
    try:
        import quickjs
    except ImportError:
        node = shutil.which("node") or shutil.which("nodejs")
        if node is None:
            pytest.skip("no JavaScript engine: quickjs (requirements/main.txt) is not installed and there is no node")
        done = subprocess.run([node, "-e", f"{script}\n{FAKE_AUTHOR}\nconsole.log({call});"], capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        return json.loads(done.stdout)
    context = quickjs.Context()
    context.eval(script + FAKE_AUTHOR)
    return json.loads(context.eval(call))


def tasks(addon):
    T = addon.farm.BakeTask
    a, b = "a" * 64, "b" * 64
    rows = [("s1", "Creature", a), ("s2", "Creature", a), ("s2", "Blob", b), ("s3", "Blob", b)]
    return [T(f"/s/{shot}.blend", name, key) for shot, name, key in rows]


def openjd_commands(template, cache, blender):
    """Each step's commands with the job's parameters filled in: {step: [argv, ...]}, one per task."""
    out = {}
    for step in template["steps"]:
        run = step["script"]["actions"]["onRun"]
        space = step.get("parameterSpace", {"taskParameterDefinitions": []})["taskParameterDefinitions"]
        rows = list(zip(*(p["range"] for p in space))) or [()]
        out[step["name"]] = []
        for row in rows:
            fill = {"{{Param.CacheDir}}": cache, "{{Param.Blender}}": blender}
            fill.update({f"{{{{Task.Param.{p['name']}}}}}": v for p, v in zip(space, row)})
            argv = [run["command"], *run["args"]]
            for key, value in fill.items():
                argv = [a.replace(key, value) for a in argv]
            out[step["name"]].append(argv)
    return out


@pytest.mark.parametrize("frames", [None, (-3, 5)])
def test_the_job_type_runs_the_openjd_commands(addon, frames):
    farm = addon.farm
    cache, blender = "/farm/cache", "/opt/blender/blender"
    job = farm.flamenco.flamenco_job(tasks(addon), cache, blender, frames)
    assert job["type"] == "skinmodes-bake" and job["settings"]["cache_dir"] == cache
    made = compile_job(farm.flamenco.JOB_TYPE_FILE.read_text(), job["settings"])
    argv = {t["name"]: [c["params"]["exe"], *c["params"]["args"]] for t in made for c in t["commands"]}
    assert all(len(t["commands"]) == 1 and t["commands"][0]["type"] == "exec" for t in made)

    expected = openjd_commands(farm.job_template(tasks(addon), "cache", blender, frames), cache, blender)
    prepares = [v for k, v in argv.items() if k.startswith("prepare-")]
    bakes = [v for k, v in argv.items() if k.startswith("bake-")]
    assert sorted(prepares) == sorted(expected["Prepare"])
    assert sorted(bakes) == sorted(expected["Bake"] + expected["Bake 2"])
    assert argv["report"] == expected["Report"][0]
    assert ("--frames=-3..5" in bakes[0]) == (frames is not None)


def test_bakes_wait_for_their_character_and_for_their_shot(addon):
    farm = addon.farm
    job = farm.flamenco.flamenco_job(tasks(addon), "/farm/cache")
    assert job["settings"]["blender"] == "{blender}"  # the Manager's variable: each worker's own Blender
    made = compile_job(farm.flamenco.JOB_TYPE_FILE.read_text(), job["settings"])
    deps = {t["name"]: t["deps"] for t in made}
    a, b = "prepare-" + "a" * 16, "prepare-" + "b" * 16
    assert list(deps)[:2] == [a, b] and deps[a] == deps[b] == []
    assert deps["bake-s1-Creature"] == [a] and deps["bake-s2-Creature"] == [a]
    assert deps["bake-s2-Blob"] == [b, "bake-s2-Creature"]  # one shot's .blend is never saved twice at once
    assert deps["bake-s3-Blob"] == [b]
    assert sorted(deps["report"]) == sorted(k for k in deps if k.startswith("bake-"))
    assert all(t["type"] == "blender" for t in made)


def test_a_job_without_bakes_is_refused(addon):
    script = addon.farm.flamenco.JOB_TYPE_FILE.read_text()
    settings = {"blender": "{blender}", "cache_dir": "/c", "frames": "", "tasks": "[]"}
    with pytest.raises(Exception, match="holds no bakes"):
        compile_job(script, settings)
