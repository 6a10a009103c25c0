"""The summary rows and "behind" items of the locomotion, RS vs skinning eigenmodes, contact and
pose-space claim sections (issue 29), from small hand-made result dicts: no section is run."""

from __future__ import annotations

from bench.report import README_ROWS, behind, fastcody_modes_lines, readme_rows, summary_rows


def _t(ms: float) -> dict:
    return {"median": ms, "min": ms, "max": ms, "repeats": 1}


def _loco(search_s: float) -> dict:
    row = {"searched_vertices": 724, "body_lengths": 2.0, "ms_per_step": 1.5}
    return {
        "rows": [
            {**row, "creature": "blob", "vertices": 724, "optimisation_s": 250.0},
            {**row, "creature": "quadruped", "vertices": 703, "optimisation_s": 200.0},  # not a blob: no row
            {**row, "creature": "blob, ~10k vertices", "vertices": 10_268, "optimisation_s": search_s},
        ],
        "seed_table1": [{"optimisation_s": 900.0}, {"optimisation_s": 3590.0}],
    }


def _scene(rs_ms: float, ours_ms: float, rs_err: float, ours_err: float) -> dict:
    return {
        "rotation_strain": {"ms_per_step": _t(rs_ms), "error_vs_full_space": rs_err},
        "skinning_eigenmodes": {"ms_per_step": _t(ours_ms), "error_vs_full_space": ours_err},
        "time_ratio_rs_over_modes": {"median": rs_ms / ours_ms},
    }


def _results(search_s: float = 260.0, arm: dict | None = None) -> dict:
    claim = [
        {"m": m, "method": k, "mean": e}
        for m in (16, 24)
        for k, e in (("seed", 0.5), ("warped", 0.6), ("pca", 0.03), ("skinning", 0.25))
    ]
    return {
        "sections": {
            "locomotion": _loco(search_s),
            "rotstrain": {
                "vertices": 425,
                "rows": {"taylor_polynomial": {"ms_per_step": _t(0.24)}},
                "seed": {"ms_per_step": 0.45},
                "comparison": {
                    "modes": 16,
                    "clusters": 100,
                    "rs_modes": 8,
                    # RS faster but less accurate: a trade, not "behind"
                    "scenes": {"bent_bar": _scene(2.0, 1.0, 2.0, 0.4), "arm": arm or _scene(2.0, 6.0, 0.9, 0.6)},
                },
            },
            "contact": {
                "speed": {
                    "vertices": 3267,
                    "m": 16,
                    "r": 100,
                    "ms_per_step": {"off": 0.8, "0": 5.6, "1000": 10.9},
                    "ratio_over_off": {"0": {"median": 5.5}, "1000": {"median": 8.7}},
                }
            },
            "posespace": {
                # the section's own speed row needs these; its "behind" needs the accuracy list
                "speed": {"m": 16, "r": 30, "ms_per_step": {"1": 0.5}, "ratio_over_one": {}},
                "goal_ratio": 1.5,
                "accuracy": [],
                "claim": {"vertices": 208, "steps": 48, "rows": claim},
            },
        },
        "errors": {},
    }


def test_each_new_section_has_its_summary_row():
    rows = {r[0].split(",")[0].split(" (")[0]: r for r in summary_rows(_results())}
    loco = rows["locomotion"]
    assert "724 / 10,268 vertices" in loco[0] and "250 / 260 s" in loco[1]
    assert "0.87× the 300 s goal" in loco[2] and "900–3,590 s" in loco[2]
    rs = rows["RS vs skinning eigenmodes"]
    assert "bent bar 2 vs 1 ms, error 2.00 vs 0.40" in rs[1]
    assert "RS 2.00× / 0.33× our time, paired" in rs[2] and "seed 003's beam 0.45 ms beside our RS 0.24 ms" in rs[2]
    contact = rows["contact step with 0 / 1"]
    assert "5.6 / 10.9 ms vs 0.8 off" in contact[1] and "5.50× / 8.70× no contact" in contact[2]
    claim = rows["pose-space claim"]
    assert "seed 0.500 / 0.500" in claim[1] and "rest skinning eigenmodes 0.250 / 0.250" in claim[1]
    assert claim[2] == "seed 2.0× / 2.0× rest skinning eigenmodes' error"


def test_rows_absent_without_their_sections():
    assert summary_rows({"sections": {}, "errors": {}}) == []


def test_readme_shows_one_row_each_for_locomotion_rs_and_contact():
    picked = [r[0] for r in readme_rows(_results())]
    for prefix in ("locomotion,", "RS vs skinning eigenmodes", "contact step"):
        assert prefix in README_ROWS
        assert sum(f.startswith(prefix) for f in picked) == 1


def test_behind_names_a_slow_search_and_rs_winning_both_ways_only():
    assert behind(_results()) == []  # searches under 300 s; RS faster only where less accurate
    slow = behind(_results(search_s=320.0))
    assert len(slow) == 1 and "blob, ~10k vertices (10,268 vertices) takes 320 s" in slow[0]
    both = behind(_results(arm=_scene(2.0, 6.0, 0.5, 0.6)))
    assert len(both) == 1 and both[0].startswith("RS beats skinning eigenmodes on the arm")


def test_fastcody_modes_paragraph_gives_both_spans_and_the_lost_directions():
    fm = {
        "vertices": 19683,
        "modes": 16,
        "rank": 56,
        "shipped_rank": 23,
        "sin_shipped": 1.0,
        "sin_full": 3.3e-8,
        "sin_full_our_leak": 0.072,
    }
    text = " ".join(fastcody_modes_lines(fm))
    assert "keeps 23 of the 56 directions" in text and "3.3e-08" in text and "19,683 vertices" in text
    assert fastcody_modes_lines({}) == []
    assert "failed: boom" in fastcody_modes_lines({"error": "boom"})[0]
