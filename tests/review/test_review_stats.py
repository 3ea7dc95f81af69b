"""Review statistics: counts per decision, method and annotator, median times, agreement."""

from __future__ import annotations

import pytest

from decided_runs import record, simple_run

from cfaug.evaluate.agreement import cohen_kappa
from cfaug.review.stats import decision_units, format_stats, review_stats
from cfaug.run.decisions import ReviewStore


def test_stats_without_decisions(tmp_path):
    run = simple_run(tmp_path / "run", 3)
    s = review_stats(run)
    assert s["items"] == 3 and s["decisions"] == 0
    assert not (run / "review.sqlite").exists()  # asking creates no store
    assert "none yet; review with: cfaug review serve" in format_stats(s)
    record(run, [("k0#0", "ann", "accepted")])
    with ReviewStore(run) as store:
        store.undo("ann")
    s = review_stats(run)
    assert s["decisions"] == 0 and s["undone"] == 1
    assert "none yet (1 recorded and undone)" in format_stats(s)


def test_counts_times_and_agreement_of_two(tmp_path):
    run = simple_run(tmp_path / "run", 6)  # k0 k2 k4: auto-cad.v1; k1 k3 k5: zero-shot.v1
    record(run, [
        ("k0#0", "ann", "accepted", {"seconds": 2.0}), ("k0#0", "bob", "accepted", {"seconds": 4.0}),
        ("k1#0", "ann", "rejected", {"seconds": 6.0}), ("k1#0", "bob", "accepted", {"seconds": 8.0}),
        ("k2#0", "ann", "edited", {"fields": {"text": "x"}, "seconds": 30.0}), ("k2#0", "bob", "edited", {"fields": {"text": "y"}}),
        ("k3#0", "ann", "other_label", {"label": "positive"}), ("k3#0", "bob", "skipped"),
        ("k4#0", "ann", "rejected"), ("k4#0", "ann", "accepted"),  # ann changed her mind: one live decision
    ])
    s = review_stats(run)
    assert s["decisions"] == 9 and s["items_decided"] == 5 and s["items_undecided"] == 1
    assert s["by_decision"] == {"accepted": 4, "rejected": 1, "edited": 2, "other_label": 1, "skipped": 1}
    assert s["by_method"] == {"auto-cad.v1": {"accepted": 3, "edited": 2},
                              "zero-shot.v1": {"accepted": 1, "rejected": 1, "other_label": 1, "skipped": 1}}
    assert s["by_annotator"]["ann"] == {"accepted": 2, "rejected": 1, "edited": 1, "other_label": 1}
    assert s["seconds_median"] == 6.0
    assert s["seconds_median_by_decision"] == {"accepted": 4.0, "rejected": 6.0, "edited": 30.0}
    assert s["seconds_median_by_annotator"] == {"ann": 6.0, "bob": 6.0}
    ag = s["agreement"]
    # shared items (skips are no label): k0 (acc, acc), k1 (rej, acc), k2 (edit, edit)
    assert ag["shared_items"] == 3 and ag["annotators"] == ["ann", "bob"]
    units = {"k0": {"a": "accepted", "b": "accepted"}, "k1": {"a": "rejected", "b": "accepted"},
             "k2": {"a": "edited", "b": "edited"}}
    assert ag["cohen_kappa"] == pytest.approx(cohen_kappa(units, "a", "b"))
    assert ag["observed"] == pytest.approx(2 / 3)
    assert s["combined"]["ties"] == 1  # k1
    text = format_stats(s)
    assert "median 6.0 s per decision" in text  # the unit is said
    assert "Cohen's kappa" in text and "Krippendorff's alpha" in text and "auto-cad.v1" in text
    assert "1 ties" in text


def test_agreement_of_three_has_alpha_fleiss_and_pairs(tmp_path):
    run = simple_run(tmp_path / "run", 4)
    record(run, [(f"k{i}#0", who, dec) for i, row in enumerate([
        ("accepted", "accepted", "accepted"), ("rejected", "rejected", "accepted"),
        ("accepted", "rejected", "rejected"), ("accepted", "accepted", "rejected")])
        for who, dec in zip(("a", "b", "c"), row)])
    s = review_stats(run)
    ag = s["agreement"]
    assert ag["cohen_kappa"] is None and ag["krippendorff_alpha"] is not None and ag["fleiss_kappa"] is not None
    assert set(ag["pairwise"]) == {"a|b", "a|c", "b|c"}
    text = format_stats(s)
    assert "a & b: Cohen's kappa" in text and "Fleiss' kappa" in text


def test_decision_units_leave_out_skips_and_name_other_labels(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    record(run, [("k0#0", "a", "skipped"), ("k0#0", "b", "other_label", {"label": "positive"})])
    with ReviewStore(run) as store:
        assert decision_units(store.current()) == {"k0#0": {"b": "other_label:positive"}}


def test_decisions_without_times_say_so(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    record(run, [("k0#0", "ann", "accepted")])  # imported decisions carry no time
    text = format_stats(review_stats(run))
    assert "no decision has a time" in text and "median - " not in text
