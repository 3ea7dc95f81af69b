"""Every rate of the comparison's summary with its 95% Wilson interval, and the methods a paired test on the
shared rows cannot tell from the leader marked as tied, in summary.json and in summary.md
(cfaug.compare.intervals, .summary)."""

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


def rows_of(**methods):
    """Per method, the rows each figure counts: ``name=(flipped rows, covered rows)`` as ranges of row numbers."""
    return {m: {"flipped_coverage": {f"r{i}" for i in flipped}, "coverage": {f"r{i}" for i in covered}}
            for m, (flipped, covered) in methods.items()}


def test_methods_a_paired_test_cannot_tell_from_the_leader_are_tied_in_json_and_markdown():
    entries = [entry("coba", 50, 99, 0.505, 99), entry("auto-cad", 42, 99, 0.424, 99),
               entry("weak", 10, 40, 0.25, 40), {"method": "zero-shot", "status": "skipped", "reason": "no LLM",
                                                 "rows": 100}]
    # auto-cad flips 36 of coba's 50 rows and 6 others (14 against 6: p 0.12); weak flips 10 of coba's (40 against 0)
    outcomes = rows_of(coba=(range(50), range(99)), **{"auto-cad": ([*range(36), *range(50, 56)], range(99))},
                       weak=(range(10), range(40)))
    summary = build_summary(entries, [], {"kind": "k"}, {"rows": 100}, None, {}, outcomes)
    by = {e["method"]: e for e in summary["methods"]}
    assert summary["ranking"] == ["coba", "auto-cad", "weak"]
    assert by["coba"]["tied_with_leader"] is None and by["coba"]["vs_leader"] is None  # the leader
    assert by["auto-cad"]["tied_with_leader"] is True
    assert by["auto-cad"]["vs_leader"] == {"figure": "flipped_coverage", "test": "exact McNemar", "leader_only": 14,
                                           "only_this": 6, "p": pytest.approx(0.1153, abs=1e-4)}
    assert by["weak"]["tied_with_leader"] is False and by["weak"]["vs_leader"]["p"] < 1e-10
    assert by["zero-shot"]["tied_with_leader"] is None and by["zero-shot"]["vs_leader"] is None
    assert summary["ranking_note"].startswith(
        "\u2248 marks auto-cad (p 0.12): on the same rows, a paired test (exact McNemar, over the rows only one of the "
        "two flipped) does not tell its flipped coverage from the leader's (coba) at the 5% level")
    md = markdown(summary)
    note_at, table_at = md.index(summary["ranking_note"]), md.index("| rank | method |")
    assert note_at < table_at  # the sentence stands above the table
    assert "| 2 \u2248 | auto-cad | ok | 100 | 99 | 99.0 [94.6, 99.8] | 42.0 [32.8, 51.8] | 42.4 [33.2, 52.3] |" in md
    assert "| 1 | coba |" in md and "| 3 | weak |" in md
    assert "flipped cov. % [95% CI]" in md and "95% Wilson interval" in md


def test_half_the_leaders_flipped_coverage_on_the_same_rows_is_no_tie():
    """60 shared rows: the leader flips 25 (41.7%), the other 12 (20.0%), all of them rows the leader flipped
    too. The two 95% intervals overlap, yet every row that tells them apart favours the leader."""
    entries = [entry("lead", 25, 40, 0.6, 40, rows=60), entry("half", 12, 30, 0.4, 30, rows=60)]
    summary = build_summary(entries, [], {"kind": "k"}, {"rows": 60}, None, {},
                            rows_of(lead=(range(25), range(40)), half=(range(12), range(30))))
    lead, half = summary["methods"]
    assert half["flipped_coverage_ci"][1] > lead["flipped_coverage_ci"][0]  # the intervals overlap
    assert half["tied_with_leader"] is False
    assert half["vs_leader"]["leader_only"] == 13 and half["vs_leader"]["only_this"] == 0
    assert half["vs_leader"]["p"] == pytest.approx(2 * 0.5 ** 13)
    assert summary["ranking_note"].startswith("On the same rows, a paired test (exact McNemar, over the rows only one "
                                              "of the two flipped) tells every other method's flipped coverage from "
                                              "the leader's (lead) at the 5% level")


def test_without_the_rows_nothing_is_marked_and_without_a_judge_coverage_is_tested():
    ranked = [entry("a", 90, 95, 0.95, 95), entry("b", 20, 95, 0.21, 95)]
    for e in ranked:
        add_intervals(e)
    assert mark_ties(ranked) is None and ranked[1]["tied_with_leader"] is None  # no per-row outcomes: no test
    assert mark_ties(ranked[:1], {}) is None and ranked[0]["tied_with_leader"] is None
    # without a judge the ranking orders by coverage, and so does the test
    no_judge = [add_intervals({**e, "flipped_coverage": None, "flip_rate": None}) for e in ranked]
    note = mark_ties(no_judge, rows_of(a=((), range(95)), b=((), range(95))))
    assert "does not tell its coverage from the leader's (a)" in note and no_judge[1]["tied_with_leader"] is True
    assert no_judge[1]["vs_leader"] == {"figure": "coverage", "test": "exact McNemar", "leader_only": 0,
                                        "only_this": 0, "p": 1.0}
