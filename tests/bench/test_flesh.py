"""The flesh section's report (bench/flesh.py): its table and its "behind" lines from a measured row."""

from bench.flesh import behind, report_lines


def _row(**change):
    row = {
        "name": "husky",
        "wobble_hz": 3.0,
        "soft": {"torso": [0.96, 3.0, 3.13, 3.17]},
        "tips": {"Tail6": 0.66, "Ear4.L": 5.41},
        "grounded": 0.0,
        "worst_extent": {"bone": "Ear3.R", "change": 0.128},
        "max_pct": 5.41,
        "reported_pct": 5.41,
        "settled_pct": 0.112,
        "ms_per_frame": 23.6,
        "spectrum": {"torso": {"lowest_hz": 2.91, "share": 0.565, "mass": 0.383, "own": 119}},
    }
    row.update(change)
    return row


def test_the_table_has_one_row_per_character_and_wobble():
    lines = report_lines({"characters": [_row(), _row(wobble_hz=1.0)]})
    rows = [line for line in lines if line.startswith("| husky")]
    assert len(rows) == 4  # the response table, then item 1's spectrum table
    assert "torso 0.96 (3.00 %, 3.17 Hz)" in rows[0] and "Ear3.R 12.8 %" in rows[0]
    assert rows[2] == "| husky | 3 Hz | torso 2.91 (119) · 56.5 % / 38.3 % |", rows[2]


def test_a_region_with_no_mode_of_its_own_reads_as_a_dash():
    none = _row(spectrum={"Tail6": {"lowest_hz": None, "share": 0.016, "mass": 0.003, "own": 0}})
    rows = [line for line in report_lines({"characters": [none]}) if line.startswith("| husky")]
    assert rows[-1] == "| husky | 3 Hz | Tail6 — (0) · 1.6 % / 0.3 % |", rows[-1]


def test_behind_names_what_misses_the_issue_limits_and_nothing_else():
    out = behind({"characters": [_row()]})
    assert any("Ear3.R" in s and "12.8 %" in s for s in out)
    assert any("Tail6 0.66 %" in s for s in out)
    assert not any("torso" in s for s in out)  # 0.96 of a/(2πf)² at 3.17 Hz: within the limits
    fine = _row(tips={"Tail6": 1.5}, worst_extent={"bone": "Ear3.R", "change": 0.05})
    assert behind({"characters": [fine]}) == []
    slow = _row(soft={"torso": [0.96, 3.0, 3.13, 4.2]}, tips={}, worst_extent={"bone": "x", "change": 0.0})
    assert len(behind({"characters": [slow]})) == 1
