"""session/modal.py: the modal plumbing of Compute Modes and Find Gait, driven in real (background) Blender.

Background Blender has no event loop and calls no ``invoke`` (it has no event to give it), so each test
operator starts its modal from ``execute`` (run through ``bpy.ops``: a real operator instance whose real
modal handler Blender holds) and the test then calls its ``modal`` and ``cancel`` directly.  Two stand-ins:
an event is a namespace with a ``.type`` (bpy cannot construct one), and the context is the real window
manager and window behind a recorder (:class:`UI`) that passes every call on and keeps what was asked (a
workspace's status text cannot be read back from bpy); reports are recorded by :class:`Recording`.  The
jobs are real worker threads: :class:`Gated`, whose work ends when the test says (or when it is
cancelled), and the real modes and gait jobs.
"""

from __future__ import annotations

import re
import threading
from types import FunctionType, SimpleNamespace

import pytest

UID = -7  # the test job's key in registry.JOBS: no object's session_uid


def event(kind):
    """A stand-in for bpy.types.Event (only ``.type`` is read)."""
    return SimpleNamespace(type=kind)


class UI:
    """The context the modal sees: the real window manager and window, each call passed on and recorded."""

    def __init__(self, context):
        self._wm, self._workspace, self.window = context.window_manager, context.workspace, context.window
        self.window_manager = self.workspace = self
        self.status: list[str | None] = []  # every status text set; None: cleared
        self.progress: list[object] = []  # "begin", each percentage shown, "end"
        self.timers, self.removed, self.handlers = [], [], []

    def progress_begin(self, low, high):
        self._wm.progress_begin(low, high)
        self.progress.append("begin")

    def progress_update(self, value):
        self._wm.progress_update(value)
        self.progress.append(value)

    def progress_end(self):
        self._wm.progress_end()
        self.progress.append("end")

    def event_timer_add(self, step, window=None):
        timer = self._wm.event_timer_add(step, window=window)
        self.timers.append(timer)
        return timer

    def event_timer_remove(self, timer):
        self._wm.event_timer_remove(timer)
        self.removed.append(timer)

    def modal_handler_add(self, op):
        self.handlers.append(op)
        return self._wm.modal_handler_add(op)

    def status_text_set(self, text):
        self._workspace.status_text_set(text)
        self.status.append(text)

    def cleaned_up(self):
        """The one timer removed, the progress bar ended and the status text cleared, last of all."""
        return (
            self.removed == self.timers
            and len(self.timers) == 1
            and self.progress[-1] == "end"
            and (self.status[-1] is None)
        )


class Recording:
    """A real operator instance with its reports recorded: what the tests call ``modal`` and ``cancel`` on.

    bpy hands an operator's reports to no one outside a ``bpy.ops`` call, and an RNA method such as
    ``report`` cannot be overridden in Python.  So the operator's own Python methods run with this as
    ``self``: every other attribute (its properties, RNA functions, ``_job``) is the real instance's, and
    each report line is recorded, then passed on.
    """

    def __init__(self, op, lines):
        object.__setattr__(self, "_op", op)
        object.__setattr__(self, "lines", lines)

    def __getattr__(self, name):
        attr = getattr(type(self._op), name, None)
        if isinstance(attr, FunctionType):  # one of the operator's Python methods: bound to this
            return attr.__get__(self)
        return getattr(self._op, name)

    def __setattr__(self, name, value):
        setattr(self._op, name, value)

    def report(self, type, message):
        self.lines.append((*type, message))
        self._op.report(type, message)


def make_gated(addon):
    Worker = addon.session.worker.Worker

    class Gated(Worker):
        """A real worker thread that runs until :attr:`release` is set or it is cancelled."""

        def __init__(self):
            self.fraction = 0.25
            self.release = threading.Event()
            self.stopped = False  # the work saw the stop flag
            self._start("test modal job")

        def _work(self):
            while not self.release.wait(0.005):
                if self._stop.is_set():
                    self.stopped = True
                    return

    return Gated


@pytest.fixture
def probe(addon):
    """Start the test operator's modal on a :class:`Gated` job in registry.JOBS; the probe holds what it did.

    Its hooks: the status line "testing: <fraction>", done reports "tested" (or raises when ``fail``), forget
    takes the job out of registry.JOBS, gave-up reasons are kept.  At the end the file is reloaded: Blender
    ends the modal it still holds, then the class goes.
    """
    import bpy

    JOBS = addon.registry.JOBS
    seen = SimpleNamespace(lines=[], gave_up=[], forgotten=[], fail=False, ui=UI(bpy.context))

    class SKINMODES_OT_test_modal(addon.session.modal.WorkerOperator):
        bl_idname = "skinmodes.test_modal"
        bl_label = "Test Modal"
        doing = "testing"

        def execute(self, context):
            seen.op, seen.job = Recording(self, seen.lines), make_gated(addon)()
            JOBS[UID] = seen.job
            return self._start_modal(seen.ui, seen.job)

        def _status(self, job):
            return f"testing: {job.fraction:.0%}"

        def _succeeded(self, context, job):
            if seen.fail:
                raise ValueError("no result\nat all")
            self.report({"INFO"}, "tested")

        def _forget(self, job):
            seen.forgotten.append(job)
            if JOBS.get(UID) is job:
                del JOBS[UID]

        def _gave_up(self, job, why):
            seen.gave_up.append(why)

    bpy.utils.register_class(SKINMODES_OT_test_modal)
    try:
        assert bpy.ops.skinmodes.test_modal() == {"RUNNING_MODAL"}
        yield seen
    finally:
        seen.job.cancel()
        bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
        bpy.utils.unregister_class(SKINMODES_OT_test_modal)


def test_start_shows_progress_and_holds_the_job(addon, probe):
    ui = probe.ui
    assert ui.progress == ["begin", 25] and ui.status == ["testing: 25%, 0 s… Esc to cancel"]
    assert len(ui.timers) == 1 and ui.timers[0].time_step == pytest.approx(0.1)
    assert ui.handlers == [probe.op._op] and probe.op._timer is ui.timers[0]
    assert addon.registry.JOBS[UID] is probe.job and probe.op._job is probe.job


def test_timer_while_running_passes_through_and_shows_progress(addon, probe):
    probe.job.fraction = 0.5
    assert probe.op.modal(probe.ui, event("TIMER")) == {"PASS_THROUGH"}
    assert probe.ui.progress[-1] == 50 and probe.ui.status[-1] == "testing: 50%, 0 s… Esc to cancel"
    assert probe.op.modal(probe.ui, event("MOUSEMOVE")) == {"PASS_THROUGH"}  # other events show nothing
    assert len(probe.ui.status) == 2 and len(probe.ui.progress) == 3
    assert probe.ui.removed == [] and addon.registry.JOBS[UID] is probe.job and probe.lines == []
    assert not probe.job.cancelled and not probe.job.done


def test_timer_when_done_finishes_and_cleans_up(addon, probe):
    probe.job.release.set()
    assert probe.job.wait(10)
    assert probe.op.modal(probe.ui, event("TIMER")) == {"FINISHED"}
    assert probe.lines == [("INFO", "tested")] and probe.gave_up == []
    assert UID not in addon.registry.JOBS and probe.forgotten == [probe.job]
    assert probe.ui.cleaned_up() and probe.op._timer is None


def test_escape_cancels_the_job_with_one_warning(addon, probe):
    assert probe.op.modal(probe.ui, event("ESC")) == {"CANCELLED"}
    assert probe.job.cancelled and probe.job.wait(10) and probe.job.stopped  # the worker saw the flag
    assert probe.lines == [("WARNING", "testing cancelled; nothing was changed")]
    assert probe.gave_up == ["testing was cancelled"]
    assert UID not in addon.registry.JOBS and probe.ui.cleaned_up()


def test_an_error_when_done_cancels_with_one_error_line_and_still_cleans_up(addon, probe):
    probe.fail = True
    probe.job.release.set()
    assert probe.job.wait(10)
    assert probe.op.modal(probe.ui, event("TIMER")) == {"CANCELLED"}
    why = "testing failed (ValueError: no result at all); nothing was changed"
    assert probe.lines == [("ERROR", why)] and probe.gave_up == [why]
    assert probe.job.cancelled and UID not in addon.registry.JOBS and probe.ui.cleaned_up()


def test_an_error_in_the_cleanup_still_forgets_the_job(addon, probe):
    """end_modal_ui fails (the timer is gone): the registry entry still goes, and the error is not swallowed."""

    def broken(timer):
        raise RuntimeError("timer already removed")

    probe.ui.event_timer_remove = broken
    with pytest.raises(RuntimeError, match="timer already removed"):
        probe.op.modal(probe.ui, event("ESC"))
    assert UID not in addon.registry.JOBS and probe.ui.progress[-1] == "end" and probe.ui.status[-1] is None


def test_blenders_cancel_stops_the_worker_and_cleans_up(addon, probe):
    probe.op.cancel(probe.ui)
    assert probe.job.cancelled and probe.job.wait(10) and probe.job.stopped
    assert probe.lines == [] and UID not in addon.registry.JOBS and probe.ui.cleaned_up()


def test_blender_calls_cancel_when_a_file_is_loaded(addon, probe):
    """Not called by the test: loading a file makes Blender end the modal it holds, through cancel()."""
    import bpy

    job = probe.job
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    assert job.cancelled and job.wait(10) and job.stopped and probe.forgotten == [job]


@pytest.fixture
def real(addon):
    """Start a subclass of a real operator (see :func:`start_real`); reload the file and drop the class after."""
    import bpy

    seen = SimpleNamespace(lines=[], ui=UI(bpy.context), job=None, classes=[])
    yield seen
    if seen.job is not None:
        seen.job.cancel()
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    for cls in seen.classes:
        bpy.utils.unregister_class(cls)


def start_real(bpy, base, idname, start, seen, **props):
    """Register an operator with the hooks and wording of the real operator ``base``, whose execute does what
    ``base.invoke`` does in a UI (start the job, then :meth:`_start_modal`) with the recording context; run it.

    Not a subclass of ``base``: registering and unregistering a subclass of a registered operator unlinks the
    registered one's Python class in Blender (its poll then answers False).  ``props``: its properties.
    """

    def execute(self, context):
        seen.op = Recording(self, seen.lines)
        seen.job = start(context)
        return self._start_modal(seen.ui, seen.job)

    hooks = {k: v for k, v in vars(base).items() if k == "doing" or (k.startswith("_") and not k.startswith("__"))}
    assert {"_status", "_succeeded", "_forget"} <= hooks.keys()
    members = {**hooks, "bl_idname": idname, "bl_label": base.bl_label, "execute": execute, "__annotations__": props}
    cls = type(idname.upper().replace(".", "_OT_", 1), (base.__mro__[1],), members)
    assert cls.__mro__[1].__name__ == "WorkerOperator"
    bpy.utils.register_class(cls)
    seen.classes.append(cls)
    assert getattr(bpy.ops.skinmodes, idname.split(".")[1])() == {"RUNNING_MODAL"}


def start_modes(addon, real):
    """Compute Modes' modal on the active object's real modes job."""
    import bpy

    props, jobs = addon.props, addon.session.jobs
    start_real(
        bpy,
        addon.operators.SKINMODES_OT_compute_modes,
        "skinmodes.test_compute_modes",
        lambda context: jobs.start_job(props.active_mesh(context), props.scene_of(context)),
        real,
        for_preview=bpy.props.BoolProperty(),
    )


def start_gait(addon, real, tmp_path):
    """Find Gait's modal on a real gait job for a small blob without an armature; returns the blob."""
    import bpy

    from tests.addon.locomotion.conftest import blob_object

    slug = blob_object(bpy, tmp_path)
    job_module, props = addon.locomotion.job, addon.props
    start_real(
        bpy,
        addon.locomotion.operators.SKINMODES_OT_find_gait,
        "skinmodes.test_find_gait",
        lambda context: job_module.start_gait_job(props.active_mesh(context), props.scene_of(context)),
        real,
    )
    return slug


def test_compute_modes_shows_its_status_and_escape_stops_it(addon, creature, real):
    obj = creature[0]
    start_modes(addon, real)
    assert addon.session.jobs.running_job(obj) is real.job
    assert re.fullmatch(rf"Computing modes of {obj.name}: [^,]+, \d+ s… Esc to cancel", real.ui.status[-1])
    assert real.op.modal(real.ui, event("ESC")) == {"CANCELLED"}
    assert real.lines == [("WARNING", "computing modes cancelled; nothing was changed")]
    assert real.job.cancelled and real.job.wait(60)
    assert obj.session_uid not in addon.registry.JOBS and real.ui.cleaned_up()


def test_compute_modes_ends_quietly_when_live_preview_cancelled_its_job(addon, creature, real):
    obj = creature[0]
    start_modes(addon, real)
    real.job.cancel()  # what turning Live Preview off does
    assert real.op.modal(real.ui, event("MOUSEMOVE")) == {"CANCELLED"}
    assert real.lines == [] and obj.session_uid not in addon.registry.JOBS and real.ui.cleaned_up()


def test_find_gait_shows_its_status_and_escape_stops_it(addon, tmp_path, real):
    slug = start_gait(addon, real, tmp_path)
    job_module = addon.locomotion.job
    assert job_module.GAIT_JOBS[slug.session_uid] is real.job
    assert re.fullmatch(r"Finding a gait for Slug: [^,]+, \d+ s… Esc to cancel", real.ui.status[-1])
    assert real.op.modal(real.ui, event("ESC")) == {"CANCELLED"}
    assert real.lines == [("WARNING", "Find Gait cancelled; nothing was changed")]
    assert real.job.cancelled and real.job.wait(60)
    assert slug.session_uid not in job_module.GAIT_JOBS and real.ui.cleaned_up()


def test_compute_modes_finishes_on_the_timer_after_the_job(addon, creature, real):
    obj = creature[0]
    start_modes(addon, real)
    assert real.job.wait(300)
    assert real.op.modal(real.ui, event("TIMER")) == {"FINISHED"}
    assert re.fullmatch(r"\d+ tets, 8 modes, 30 clusters in [\d.]+ s \(\w+\)", real.lines[-1][1]), real.lines
    assert obj.session_uid not in addon.registry.JOBS and real.ui.cleaned_up()
    assert addon.session.session.current_session(obj, creature[2]) is not None


def test_compute_modes_reports_a_failed_finish_in_one_error_line(addon, creature, real):
    """The done hook raises (the object was deleted meanwhile): one ERROR line, and the cleanup still ran."""
    import bpy

    obj = creature[0]
    name, uid = obj.name, obj.session_uid
    start_modes(addon, real)
    assert real.job.wait(300)
    bpy.data.objects.remove(obj)
    assert real.op.modal(real.ui, event("TIMER")) == {"CANCELLED"}
    assert real.lines == [("ERROR", f"'{name}' was deleted while its modes were computed; nothing was changed")]
    assert uid not in addon.registry.JOBS and uid not in addon.registry.SESSIONS and real.ui.cleaned_up()


def test_find_gait_reports_a_job_cancelled_elsewhere_when_it_ends(addon, tmp_path, real):
    """Find Gait has no quiet end: a job cancelled by someone else is reported by its done hook, in one line."""
    slug = start_gait(addon, real, tmp_path)
    job_module = addon.locomotion.job
    real.job.cancel()
    assert real.job.wait(60)
    assert real.op.modal(real.ui, event("TIMER")) == {"CANCELLED"}
    assert real.lines == [("ERROR", "Find Gait was cancelled; nothing was changed")]
    assert slug.session_uid not in job_module.GAIT_JOBS and not slug.get("skinmodes_gait") and real.ui.cleaned_up()
