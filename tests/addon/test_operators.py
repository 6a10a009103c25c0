"""Operators: polls that answer instead of raising, Show/Hide Mode's shading, messages (issue 11, item 9).

Exact comparisons throughout: polls and shading are enums and booleans, not numbers.
"""

import pytest

from tests.addon.test_bad_input import make_active

SCRIPT_ERROR = "Python script error"


def skinmodes_operators(bpy):
    return sorted(name for name in dir(bpy.ops.skinmodes) if not name.startswith("_"))


def polls(bpy, capfd):
    """Every operator's poll(), and what Blender printed while asking (a raising poll prints a script error)."""
    capfd.readouterr()
    answers = {name: getattr(bpy.ops.skinmodes, name).poll() for name in skinmodes_operators(bpy)}
    out = capfd.readouterr()
    return answers, out.out + out.err


@pytest.mark.parametrize("active", [None, "CAMERA", "ARMATURE", "MESH_WITHOUT_RIG"])
def test_every_poll_answers_false_without_a_script_error(addon, capfd, active):
    import bpy

    if active == "CAMERA":
        bpy.ops.object.camera_add()
    elif active == "ARMATURE":
        bpy.ops.object.armature_add()
    elif active == "MESH_WITHOUT_RIG":  # an Armature modifier with no armature (none at all: its own motion rigs it)
        bpy.ops.mesh.primitive_cube_add()
        bpy.context.active_object.modifiers.new("Armature", "ARMATURE")
    if active is None:
        bpy.context.view_layer.objects.active = None
    else:
        make_active(bpy, bpy.context.view_layer.objects[-1])
    assert (bpy.context.active_object is None) == (active is None)
    answers, printed = polls(bpy, capfd)
    assert len(answers) >= 7, answers  # compute_modes, bake, clear_bake, create_mask, show/hide mode, refresh
    assert SCRIPT_ERROR not in printed and "Traceback" not in printed, printed
    # Saving or applying a material preset needs a mesh, not a rig: the Material panel shows on any mesh.
    assert answers.pop("material_preset_add") == (active == "MESH_WITHOUT_RIG")
    assert answers.pop("material_preset_apply") == (active == "MESH_WITHOUT_RIG")
    assert not any(answers.values()), answers


def test_polls_accept_a_skinned_mesh(addon, creature, capfd):
    import bpy

    answers, printed = polls(bpy, capfd)
    assert SCRIPT_ERROR not in printed
    for name in ("compute_modes", "bake", "create_mask", "show_mode"):
        assert answers[name], name
    for name in ("clear_bake", "hide_mode", "refresh_preview"):  # nothing baked, shown or previewed yet
        assert not answers[name], name


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("ARMATURE", "is an armature,"), ("EMPTY", "is an empty,"), ("CAMERA", "is a camera,")],
)
def test_not_a_mesh_message_uses_the_right_article(addon, kind, expected):
    import bpy
    from bl_ext.user_default.skinmodes.character import check_object
    from bl_ext.user_default.skinmodes.core.errors import SkinmodesError

    data = None if kind == "EMPTY" else getattr(bpy.data, kind.lower() + "s").new("thing")
    obj = bpy.data.objects.new("Thing", data)
    with pytest.raises(SkinmodesError) as err:
        check_object(obj)
    assert expected in str(err.value), str(err.value)


def view3d_shading(bpy):
    """The shading of the 3D view of the factory 'Layout' screen (the bpy module keeps one window)."""
    screen = bpy.context.screen
    if screen is None:
        pytest.skip("this Blender build has no window screen in background mode: no 3D view to test")
    areas = [a for a in screen.areas if a.type == "VIEW_3D"]
    assert areas, [a.type for a in screen.areas]
    return areas[0].spaces.active.shading


def test_hide_mode_restores_exactly_the_shading_show_mode_replaced(addon, creature):
    import bpy

    obj, _, _ = creature
    shading = view3d_shading(bpy)
    shading.type, shading.color_type = "WIREFRAME", "OBJECT"
    assert bpy.ops.skinmodes.show_mode() == {"FINISHED"}
    assert (shading.type, shading.color_type) == ("SOLID", "VERTEX")
    assert obj.data.color_attributes.get("skinmodes_mode") is not None
    obj.skinmodes.inspect_mode = 1
    assert bpy.ops.skinmodes.show_mode() == {"FINISHED"}  # a second mode: the first shading is still the one kept
    assert bpy.ops.skinmodes.hide_mode() == {"FINISHED"}
    assert (shading.type, shading.color_type) == ("WIREFRAME", "OBJECT")
    assert obj.data.color_attributes.get("skinmodes_mode") is None


def test_hide_mode_leaves_shading_the_user_changed_or_never_changed(addon, creature):
    import bpy

    shading = view3d_shading(bpy)
    # The user picks another shading while the mode shows: Hide Mode leaves the user's choice.
    shading.type, shading.color_type = "MATERIAL", "MATERIAL"
    assert bpy.ops.skinmodes.show_mode() == {"FINISHED"}
    shading.color_type = "RANDOM"
    assert bpy.ops.skinmodes.hide_mode() == {"FINISHED"}
    assert (shading.type, shading.color_type) == ("SOLID", "RANDOM")
    # A view already showing vertex colours: Show Mode changed nothing, so Hide Mode restores nothing.
    shading.type, shading.color_type = "SOLID", "VERTEX"
    assert bpy.ops.skinmodes.show_mode() == {"FINISHED"}
    assert bpy.ops.skinmodes.hide_mode() == {"FINISHED"}
    assert (shading.type, shading.color_type) == ("SOLID", "VERTEX")


def test_show_and_restore_work_on_any_shading_and_are_forgotten_on_load(addon):
    """The two functions behind the operators, on the scene's own View3DShading (no 3D view needed)."""
    import bpy
    from bl_ext.user_default.skinmodes import operators

    shading = bpy.context.scene.display.shading
    shading.type, shading.color_type = "WIREFRAME", "SINGLE"
    operators.show_vertex_colours(shading)
    assert (shading.type, shading.color_type) == ("SOLID", "VERTEX")
    assert operators.restore_shading(shading)
    assert (shading.type, shading.color_type) == ("WIREFRAME", "SINGLE")
    assert not operators.restore_shading(shading)  # restored once: nothing left to restore
    operators.show_vertex_colours(bpy.context.scene.display.shading)
    assert operators.SHADING_BEFORE
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    assert not operators.SHADING_BEFORE  # addresses of another file's views mean nothing


def test_error_line_is_one_line_and_says_what_failed(addon):
    error_line = addon.operators.error_line
    said = addon.core.errors.SkinmodesError("the mesh is flat; give it volume")
    assert error_line(said, "bake") == "the mesh is flat; give it volume"
    assert error_line(OSError(28, "No space\nleft on device"), "bake") == (
        "bake failed (OSError: [Errno 28] No space left on device); nothing was changed"
    )


@pytest.fixture
def failing_operator(addon):
    """A real operator whose execute and invoke go through reports_errors and raise what the test says."""
    import bpy

    reports_errors = addon.operators.reports_errors

    class SKINMODES_OT_test_failing(bpy.types.Operator):
        bl_idname = "skinmodes.test_failing"
        bl_label = "Failing"
        error: bpy.props.StringProperty()  # type: ignore[valid-type]

        def raise_it(self):
            if self.error == "said":
                raise addon.core.errors.SkinmodesError("nothing to bake; key the rig first")
            raise ValueError("a bug\nover two lines")

        @reports_errors("test run")
        def execute(self, context):
            self.raise_it()
            return {"FINISHED"}

        @reports_errors()
        def invoke(self, context, event):
            self.raise_it()
            return {"FINISHED"}

    bpy.utils.register_class(SKINMODES_OT_test_failing)  # Blender accepts the wrappers' argument counts
    yield bpy.ops.skinmodes.test_failing
    bpy.utils.unregister_class(SKINMODES_OT_test_failing)


def test_reports_errors_reports_one_line_and_cancels(addon, failing_operator):
    import bpy

    from tests.addon.test_bad_input import report_of

    assert report_of(bpy, failing_operator, error="said") == "nothing to bake; key the rig first"
    assert report_of(bpy, failing_operator, error="bug") == (
        "test run failed (ValueError: a bug over two lines); nothing was changed"
    )
    # invoke catches SkinmodesError only (no "failed" given): a bug there stays a traceback.
    assert report_of(bpy, lambda **kw: failing_operator("INVOKE_DEFAULT", **kw), error="said") == (
        "nothing to bake; key the rig first"
    )
    with pytest.raises(RuntimeError, match="ValueError"):
        failing_operator("INVOKE_DEFAULT", error="bug")


def test_every_operator_reports_through_the_one_helper(addon):
    for cls in addon.operators.CLASSES:
        for name in ("execute", "invoke"):
            method = cls.__dict__.get(name)
            if method is not None:
                assert hasattr(method, "__wrapped__"), f"{cls.__name__}.{name} does not use reports_errors"


def test_add_pose_takes_the_current_frame_and_refuses_the_rest_frame_and_repeats(addon, creature):
    """Refusals are one-line ERROR reports (bpy.ops raises them as RuntimeError) that change nothing."""
    import bpy

    obj, _, scene = creature
    s = obj.skinmodes
    scene.frame_set(1)
    with pytest.raises(RuntimeError, match="frame 1 is the rest frame"):
        bpy.ops.skinmodes.add_pose()
    assert len(s.poses) == 0
    scene.frame_set(12)
    assert bpy.ops.skinmodes.add_pose() == {"FINISHED"}
    assert [p.frame for p in s.poses] == [12] and s.poses[0].contact == "AUTO"
    with pytest.raises(RuntimeError, match="frame 12 is already a training pose"):
        bpy.ops.skinmodes.add_pose()
    assert len(s.poses) == 1
    scene.frame_set(20)
    assert bpy.ops.skinmodes.add_pose() == {"FINISHED"}
    assert bpy.ops.skinmodes.remove_pose(index=0) == {"FINISHED"}
    assert [p.frame for p in s.poses] == [20]
    with pytest.raises(RuntimeError, match="there is no training pose 5"):
        bpy.ops.skinmodes.remove_pose(index=5)
    assert len(s.poses) == 1
    assert bpy.ops.skinmodes.remove_pose() == {"FINISHED"} and len(s.poses) == 0
    assert not bpy.ops.skinmodes.remove_pose.poll()


@pytest.fixture
def bake_modal(addon, creature, tmp_path, monkeypatch):
    """Bake Secondary Motion's modal, started on the creature after a first bake; one frame per timer tick.

    Background Blender gives no invoke a window to run a modal in, so a test operator made of the real
    operator's methods starts it from ``execute`` through :meth:`_start_modal` (what ``invoke`` does in a
    UI), with the recording context of tests/addon/session/test_modal.py.  Not a subclass of the real
    operator (see ``start_real`` there).  The clock the slices are timed with advances 30 ms per read,
    so each tick bakes exactly one frame.  At the end the file is reloaded (Blender ends a modal it still
    holds), then the class goes.
    """
    import itertools
    from pathlib import Path
    from types import SimpleNamespace

    import bpy

    from tests.addon.helpers import disk_fingerprint, full_fingerprint
    from tests.addon.session.test_modal import UI, Recording

    obj, _, scene = creature
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    assert bpy.ops.skinmodes.bake(output="PC2") == {"FINISHED"}  # the bake the user has: kept whatever happens
    obj.skinmodes.damping_ratio = 0.6  # a different simulation: a finished re-bake would change the file
    scene.frame_set(9)
    cache = Path(bpy.path.abspath(obj.skinmodes.bake_file)).parent  # the point cache's and the model's files
    assert ".pc2" in {p.suffix for p in cache.iterdir()}, sorted(cache.iterdir())
    seen = SimpleNamespace(lines=[], ui=UI(bpy.context), obj=obj, cache=cache, job=None)
    seen.disk, seen.scene = disk_fingerprint(cache), full_fingerprint(bpy, obj)
    clock = itertools.count(0.0, 0.03)  # a tick reads it at its start, after a frame (30 ms) and past its 50 ms
    monkeypatch.setattr(addon.operators, "time", SimpleNamespace(perf_counter=lambda: next(clock)))

    base = addon.operators.SKINMODES_OT_bake

    def execute(self, context):
        seen.op = Recording(self, seen.lines)
        return self._start_modal(seen.ui, self._make_job(context))

    wanted = (
        "_make_job",
        "_start_modal",
        "modal",
        "cancel",
        "_finish",
        "_status",
        "_report",
        "_job",
        "_steps",
        "_timer",
    )
    methods = {k: getattr(base, k) for k in wanted}  # from the operator's mixin, _BakeModal
    output = bpy.props.EnumProperty(items=[("SETTINGS", "From Settings", ""), ("PC2", "Point Cache", "")])
    members = {**methods, "bl_idname": "skinmodes.test_bake", "bl_label": base.bl_label, "execute": execute}
    cls = type("SKINMODES_OT_test_bake", (bpy.types.Operator,), {**members, "__annotations__": {"output": output}})
    bpy.utils.register_class(cls)
    try:
        assert bpy.ops.skinmodes.test_bake(output="PC2") == {"RUNNING_MODAL"}
        seen.job = seen.op._job
        yield seen
    finally:
        if seen.job is not None:
            seen.job.cancel()  # a no-op once the test (or Blender, on a file load) cancelled it
        bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
        bpy.utils.unregister_class(cls)


def bake_ticks(bake, n):
    """``n`` timer ticks of the bake's modal, one frame each: a .partial file is being written."""
    from tests.addon.session.test_modal import event

    for _ in range(n):
        assert bake.op.modal(bake.ui, event("TIMER")) == {"RUNNING_MODAL"}
    assert bake.job.frames_done == n < bake.job.total
    assert any(p.name.endswith(".partial") for p in bake.cache.rglob("*")), sorted(bake.cache.rglob("*"))


def left_as_before(bpy, bake):
    """The scene and the cache folder as before the bake started: the .partial file gone, the old bake kept."""
    from tests.addon.helpers import differences, disk_fingerprint, full_fingerprint

    assert disk_fingerprint(bake.cache) == bake.disk
    assert full_fingerprint(bpy, bake.obj) == bake.scene, differences(bake.scene, full_fingerprint(bpy, bake.obj))


def test_blenders_cancel_of_the_bake_drops_it_and_cleans_up(addon, bake_modal):
    import bpy

    bake_ticks(bake_modal, 2)
    bake_modal.op.cancel(bake_modal.ui)
    left_as_before(bpy, bake_modal)
    assert bake_modal.ui.cleaned_up() and bake_modal.op._timer is None
    assert bake_modal.lines == []  # quiet: Blender ended it, no one pressed Esc


def test_loading_a_file_during_the_bake_removes_its_partial_file(addon, bake_modal):
    """Not called by the test: loading a file makes Blender end the modal it holds, through cancel()."""
    import bpy

    from tests.addon.helpers import disk_fingerprint

    bake_ticks(bake_modal, 1)
    bpy.ops.wm.read_homefile(use_empty=True, use_factory_startup=True)
    assert disk_fingerprint(bake_modal.cache) == bake_modal.disk


def test_escape_in_the_middle_of_the_bake_changes_nothing(addon, bake_modal):
    import bpy

    from tests.addon.session.test_modal import event

    bake_ticks(bake_modal, 2)
    assert bake_modal.op.modal(bake_modal.ui, event("ESC")) == {"CANCELLED"}
    left_as_before(bpy, bake_modal)
    assert bake_modal.ui.cleaned_up() and bake_modal.op._timer is None
    assert bake_modal.lines == [("WARNING", "bake cancelled; nothing was changed")]


def test_bake_invoked_without_a_window_bakes_at_once(addon, creature, tmp_path):
    """Background Blender (the command line, a farm) has no window to run a modal in: invoke runs execute.

    bpy.ops never calls invoke in background Blender, so the real invoke is called here on a stand-in
    operator whose execute is the real bake's, run through bpy.ops.
    """
    from pathlib import Path
    from types import SimpleNamespace

    import bpy

    from tests.addon.session.test_modal import event

    obj = creature[0]
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "shot.blend"))
    ran = []
    stand_in = SimpleNamespace(execute=lambda context: ran.append(bpy.ops.skinmodes.bake(output="PC2")) or ran[-1])
    assert addon.operators.SKINMODES_OT_bake.invoke(stand_in, bpy.context, event("LEFTMOUSE")) == {"FINISHED"}
    assert ran == [{"FINISHED"}]
    assert obj.skinmodes.bake_kind == "PC2" and Path(bpy.path.abspath(obj.skinmodes.bake_file)).is_file()
