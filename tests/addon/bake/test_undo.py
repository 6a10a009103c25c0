"""A commit's undo log: newest step first, every step even when one fails."""


def test_steps_are_undone_newest_first_and_a_failure_does_not_stop_the_rest(addon):
    undo_mod = addon.bake.undo
    undo, done = undo_mod.Undo(), []
    undo.add(lambda: done.append("first"))
    undo.add(lambda: 1 / 0)
    undo.add(lambda: done.append("last"))
    failed = undo.run()
    assert done == ["last", "first"]
    assert failed == ["ZeroDivisionError: division by zero"]
    assert undo.run() == [] and done == ["last", "first"]  # run once: the log is empty after


def test_set_all_sets_each_value(addon):
    class Target:
        a = 1
        b = "x"

    target = Target()
    addon.bake.undo.set_all(target, {"a": 2, "b": "y"})
    assert (target.a, target.b) == (2, "y")
