"""The command line's signal channel: a stop request stops the work at its next checkpoint."""

import pytest


def test_a_stop_request_raises_interrupted_with_its_signal(addon):
    signals, registry = addon.session.signals, addon.registry
    try:
        assert not signals.stop_requested()
        signals.raise_if_stopped()  # nothing asked: nothing happens
        registry.STOP_REQUESTS.extend([15, 2])
        assert signals.stop_requested()
        with pytest.raises(signals.Interrupted) as stopped:
            signals.raise_if_stopped()
        assert stopped.value.signum == 15 and isinstance(stopped.value, KeyboardInterrupt)
    finally:
        registry.STOP_REQUESTS.clear()


def test_progress_goes_to_every_listener(addon):
    signals, registry = addon.session.signals, addon.registry
    heard = []
    registry.PROGRESS_LISTENERS.append(lambda stage, f: heard.append((stage, f)))
    try:
        signals.report_progress("meshing", 0.25)
    finally:
        registry.PROGRESS_LISTENERS.clear()
    assert heard == [("meshing", 0.25)]
