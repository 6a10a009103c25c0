// skinmodes farm bake: a Flamenco 3 job type running the same commands as the OpenJD bundle.
//
// Install: copy this file into the `scripts/` folder next to `flamenco-manager` and restart the
// Manager; Flamenco names the job type after the file: "skinmodes-bake".  Submit the
// `flamenco_job.json` that `skinmodes farm` writes beside `template.yaml` (see docs/farm.md).
//
// Tasks (each runs Blender headless with the skinmodes extension installed):
//   prepare-<character>  `skinmodes prepare` once per distinct character, into the shared cache_dir;
//   bake-<shot>-<object> `skinmodes bake --prepared-only` per shot x object, after its character's
//                        Prepare (and after the previous object of the same shot: a bake saves the
//                        shot's .blend, so two of one shot never run at once);
//   report               `skinmodes report <cache_dir>/reports`, after every bake.
// The argument lists equal the OpenJD template's (skinmodes_addon/farm/template.py), which
// tests/addon/farm/test_flamenco.py checks by running compileJob below in a JavaScript engine.

const JOB_TYPE = {
    label: "skinmodes farm bake",
    description: "Prepare each skinmodes character once, then bake every shot x object from it",
    settings: [
        { key: "blender", type: "string", default: "{blender}",
          description: "Blender on the workers (the skinmodes extension installed); {blender} is the Manager's variable" },
        { key: "cache_dir", type: "string", subtype: "dir_path", required: true,
          description: "The cache folder every task shares: prepared models, point caches, task reports" },
        { key: "frames", type: "string", default: "",
          description: "first..last of every bake; empty: each object's own frame range" },
        { key: "tasks", type: "string", required: true,
          description: "The bakes as JSON [{shot, object, character}], as `skinmodes farm` writes them" },
    ],
};

// How a task runs skinmodes: the Blender executable with these arguments first (template.py's LAUNCH).
const LAUNCH = ["-b", "--command", "skinmodes"];

function compileJob(job) {
    const settings = job.settings;
    const rows = parseRows(settings.tasks);
    const reports = `${settings.cache_dir}/reports`;
    const prepares = {};  // character key -> its Prepare task
    for (const row of rows) {
        if (!(row.character in prepares)) {
            const task = skinmodesTask(`prepare-${row.character.slice(0, 16)}`, settings, "prepare", row, []);
            prepares[row.character] = task;
            job.addTask(task);
        }
    }
    const lastOfShot = {};  // shot -> its latest Bake task
    const bakes = [];
    for (const row of rows) {
        const task = skinmodesTask(`bake-${basename(row.shot)}-${row.object}`, settings, "bake", row, ["--prepared-only"]);
        task.addDependency(prepares[row.character]);
        if (row.shot in lastOfShot) {
            task.addDependency(lastOfShot[row.shot]);
        }
        lastOfShot[row.shot] = task;
        bakes.push(task);
        job.addTask(task);
    }
    const report = author.Task("report", "blender");
    report.addCommand(author.Command("exec", { exe: settings.blender, args: LAUNCH.concat(["report", reports]) }));
    for (const bake of bakes) {
        report.addDependency(bake);
    }
    job.addTask(report);
}

// One task running `<blender> -b --command skinmodes COMMAND` on one shot and object.
function skinmodesTask(name, settings, command, row, extra) {
    let args = LAUNCH.concat([command, "--blend", row.shot, "--object", row.object, "--cache-dir", settings.cache_dir]);
    args = args.concat(extra, ["--report", `${settings.cache_dir}/reports`, "--progress", "openjd"]);
    if (settings.frames) {
        args.push(`--frames=${settings.frames}`);  // one token: a negative start is not an option
    }
    const task = author.Task(name, "blender");
    task.addCommand(author.Command("exec", { exe: settings.blender, args: args }));
    return task;
}

function parseRows(text) {
    const rows = JSON.parse(text);
    if (!Array.isArray(rows) || rows.length === 0) {
        throw "skinmodes-bake: the tasks setting holds no bakes (write it with `skinmodes farm`)";
    }
    for (const row of rows) {
        if (!row.shot || !row.object || !row.character) {
            throw `skinmodes-bake: a bake without shot, object or character: ${JSON.stringify(row)}`;
        }
    }
    return rows;
}

// The shot's file name without folder and .blend (a task name, not a path).
function basename(shot) {
    const name = shot.split(/[\\/]/).pop();
    return name.endsWith(".blend") ? name.slice(0, -6) : name;
}
