"""The peers section's converged pairing (issue 23, item 5) in the README summary and the "behind" list.

No timing is asserted: the figures below are made up, and the test checks that the summary row and the
"behind" line state the converged ratio with its conditions (each side's stop and iterations, the
accuracy), and that a converged ratio within the 0.5x target is not listed as behind.
"""

from bench.report import behind, summary_rows


def _q(median: float) -> dict:
    return {"median": median, "q1": median, "q3": median, "min": median, "max": median, "rounds": 30}


def _t(seconds: float) -> dict:
    return {"median": seconds, "min": seconds, "max": seconds, "repeats": 60}


def _res(converged_ratio: float) -> dict:
    row = {
        "vertices": 2744,
        "modes": 16,
        "clusters": 140,
        "step_ours": _t(1e-3),
        "step_fastcody": _t(2e-3),
        "step_ratio_ours_over_fastcody": _q(0.45),
        "converged": {
            "ours": {"tolerance": 1e-6, "cap": 20, "error": 9.1e-6, "iterations": {"mean": 7.2, "max": 8, "min": 6}},
            "fastcody": {
                "threshold": 1.3e-4,
                "cap": 200,
                "error": 8.0e-6,
                "iterations": {"mean": 7.4, "max": 8, "min": 6},
                "matched": True,
            },
            "step_ours": _t(0.6e-3),
            "step_fastcody": _t(0.9e-3),
            "step_ratio_ours_over_fastcody": _q(converged_ratio),
        },
    }
    return {"sections": {"peers": {"steps": [row], "preparation": []}}}


def test_the_converged_ratio_is_stated_with_its_conditions():
    res = _res(0.65)
    (line,) = [g for g in behind(res) if "converged" in g]
    assert line.startswith("Per-step time at 2,744 vertices with both sides converged to the same accuracy is 0.65×")
    for said in ("target ≤ 0.5×", "ours tolerance 1e-06, 7.2 iterations", "fast-cody threshold 0.00013, 7.4"):
        assert said in line, (said, line)
    (row,) = [r for r in summary_rows(res) if "both converged" in r[0]]
    assert "trajectory error 9.1e-06 vs 8.0e-06" in row[0] and row[2].startswith("0.65×")


def test_a_converged_ratio_within_the_target_is_not_behind():
    assert not [g for g in behind(_res(0.45)) if "converged" in g]
