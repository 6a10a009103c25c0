"""Preparing a request: off the main thread, stage by stage (issue 11, item 7)."""

import threading


def test_worker_runs_off_the_main_thread_and_reports_its_stages(addon, creature):
    session_mod = addon.session
    obj, _, scene = creature
    seen = []
    request = session_mod.read_request(obj, scene)

    def progress(stage, fraction):
        seen.append((stage, fraction, threading.current_thread() is threading.main_thread()))

    worker = threading.Thread(target=session_mod.prepare, args=(request, progress), daemon=True)
    worker.start()
    worker.join()
    stages = [s for s, _, _ in seen]
    assert stages == ["meshing", "volume weights", "modes and clusters", "embedding", "slowest frequency", "done"]
    fractions = [f for _, f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert not any(main for _, _, main in seen)
