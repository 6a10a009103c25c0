"""The bench's shared helpers (bench/common.py)."""

from bench.common import machines_note


def test_the_report_names_every_machine_its_sections_ran_on():
    """A re-run of one section on another machine must not relabel the others' figures."""
    one = {"machine": {"cpu": "A"}, "section_machines": {"peers": "A", "physskin": "A"}}
    assert machines_note(one) == "A"
    two = {"machine": {"cpu": "B"}, "section_machines": {"peers": "A", "scaling": "A", "physskin": "B"}}
    assert machines_note(two) == "several machines: A (peers, scaling); B (physskin)"
    assert machines_note({"machine": {"processor": "x86_64"}}) == "x86_64"
