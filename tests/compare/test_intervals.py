"""Every rate of the comparison's summary with its 95% Wilson interval, and the methods the data cannot tell
from the leader marked as tied, in summary.json and in summary.md (cfaug.compare.intervals, .summary)."""

import pytest

from cfaug.compare.intervals import add_intervals, mark_ties, wilson_interval
from cfaug.compare.summary import build_summary, markdown


def test_wilson_interval_against_known_values():
    # Wilson (1927) / Newcombe (1998) example: 81 of 263 -> [0.2553, 0.3662]
    lo, hi = wilson_interval(81, 263)
    assert lo == pytest.approx(0.2553, abs=1e-4) and hi == pytest.approx(0.3662, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(0, 10)[1] == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(10, 10)[1] == 1.0 and wilson_interval(10, 10)[0] == pytest.approx(0.7225, abs=1e-4)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def entry(method, flipped, covered, flip_rate, cfs, rows=100, status="ok", edit=0.1):
    return {"method": method, "status": status, "reason": None, "rows": rows, "counterfactuals": cfs,
            "coverage": covered / rows, "flipped_coverage": flipped / rows, "flip_rate": flip_rate,
            "edit_rate": edit, "seconds": 1.0}


def test_intervals_over_rows_and_counterfactuals():
    e = add_intervals(entry("a", 42, 99, 0.424, 99))
    assert e["flipped_coverage_ci"] == wilson_interval(42, 100)
    assert e["coverage_ci"] == wilson_interval(99, 100)
    assert e["flip_rate_ci"] == wilson_interval(42, 99)  # a share of the counterfactuals, not of the rows
    skipped = add_intervals({"method": "z", "status": "skipped", "rows": 100, "counterfactuals": None,
                             "coverage": None, "flipped_coverage": None, "flip_rate": None})
    assert skipped["coverage_ci"] is skipped["flipped_coverage_ci"] is skipped["flip_rate_ci"] is None


def test_methods_whose_interval_overlaps_the_leaders_are_tied_in_json_and_markdown():
    entries = [entry("coba", 50, 99, 0.505, 99), entry("auto-cad", 42, 99, 0.424, 99),
               entry("weak", 10, 40, 0.25, 40), {"method": "zero-shot", "status": "skipped", "reason": "no LLM",
                                                 "rows": 100}]
    summary = build_summary(entries, [], {"kind": "k"}, {"rows": 100}, None, {})
    by = {e["method"]: e for e in summary["methods"]}
    assert summary["ranking"] == ["coba", "auto-cad", "weak"]
    assert by["coba"]["tied_with_leader"] is None  # the leader
    assert by["auto-cad"]["tied_with_leader"] is True  # [0.33, 0.52] overlaps [0.40, 0.60]
    assert by["weak"]["tied_with_leader"] is False and by["zero-shot"]["tied_with_leader"] is None
    assert summary["ranking_note"].startswith("≈ marks auto-cad: its flipped coverage 95% interval overlaps the "
                                              "leader's (coba)")
    md = markdown(summary)
    note_at, table_at = md.index(summary["ranking_note"]), md.index("| rank | method |")
    assert note_at < table_at  # the sentence stands above the table
    assert "| 2 ≈ | auto-cad | ok | 100 | 99 | 99.0 [94.6, 99.8] | 42.0 [32.8, 51.8] | 42.4 [33.2, 52.3] |" in md
    assert "| 1 | coba |" in md and "| 3 | weak |" in md
    assert "flipped cov. % [95% CI]" in md and "95% Wilson interval" in md


def test_a_clear_leader_is_said_so():
    ranked = [entry("a", 90, 95, 0.95, 95), entry("b", 20, 95, 0.21, 95)]
    for e in ranked:
        add_intervals(e)
    note = mark_ties(ranked)
    assert ranked[1]["tied_with_leader"] is False and note.startswith("No method's flipped coverage 95% interval")
    assert mark_ties(ranked[:1]) is None and ranked[0]["tied_with_leader"] is None
    # without a judge the ranking orders by coverage, and so do the ties
    no_judge = [add_intervals({**e, "flipped_coverage": None, "flip_rate": None}) for e in ranked]
    assert "coverage 95% interval" in mark_ties(no_judge) and no_judge[1]["tied_with_leader"] is True
