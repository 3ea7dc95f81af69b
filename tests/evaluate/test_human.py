"""Human figures from review decisions: the human flip rate and the automatic judge against people."""

from __future__ import annotations

import dataclasses
import json

import pytest

from cfaug.cli import main
from cfaug.evaluate.human import (decision_mark, human_figures, judge_from_file, majority, marks, review_figures,
                                  summary_lines)
from cfaug.evaluate.judgements import read_judgements
from cfaug.evaluate.pairs import load_pairs
from cfaug.run.decisions import Decision, ReviewStore

FAST = ["--ngram-reference", "none"]  # no n-gram model: seconds saved per run


def dec(item, annotator, decision, seq=[0]):  # noqa: B006 - a counter shared by the calls
    seq[0] += 1
    return Decision(seq[0], item, annotator, decision, {"text": "x"} if decision == "edited" else None,
                    "neutral" if decision == "other_label" else None, 0.0, None, None)


def test_majority_ignores_no_say_and_leaves_ties_undecided():
    assert majority([True, None, True, False]) is True
    assert majority([True, False]) is None
    assert majority([None, None]) is None and majority([]) is None
    assert majority([0, 0, 1]) == 0


def test_each_decision_has_its_mark():
    assert [decision_mark(d) for d in ("accepted", "edited", "rejected", "not_flipped", "other_label", "skipped")] \
        == [1, 1, 0, 0, 0, None]
    with pytest.raises(ValueError, match="unknown decision"):
        decision_mark("maybe")


def test_marks_take_the_majority_and_the_latest_decision_per_annotator():
    ds = [dec("a", "ann", "rejected"), dec("a", "ann", "accepted"),  # ann changed her mind: accepted
          dec("a", "bob", "edited"),
          dec("b", "ann", "accepted"), dec("b", "bob", "not_flipped"),  # a tie: no mark
          dec("c", "ann", "skipped"),  # skipped: no mark
          dec("d", "ann", "skipped"), dec("d", "bob", "other_label"),
          dec("e", "ann", "accepted")]
    ds.append(Decision(99, "e", "bob", "rejected", None, None, 0.0, None, None, undone=True))  # undone: not counted
    assert marks(ds) == {"a": 1, "d": 0, "e": 1}


def test_figures_count_flips_rejects_and_ties_and_compare_the_judge():
    rows = {f"r{i}": "m" for i in range(8)}
    ds = [dec("r0", "ann", "accepted"),      # flipped; judge says flipped: true positive
          dec("r1", "ann", "accepted"),      # flipped; judge says not: false negative
          dec("r2", "ann", "not_flipped"),   # not flipped; judge says flipped: false positive
          dec("r3", "ann", "other_label"),   # not flipped; judge agrees: true negative
          dec("r4", "ann", "edited"),        # flipped for the rate; left out of the judge comparison
          dec("r5", "ann", "rejected"),      # no say on the label
          dec("r6", "ann", "skipped"),
          dec("gone#0", "ann", "accepted")]  # a row not in scope
    judge = {"r0": True, "r1": False, "r2": True, "r3": False, "r4": False, "r5": True}
    f = human_figures(ds, rows, judge, "tfidf")
    assert f["rows"] == {"in_scope": 8, "reviewed": 7, "decided": 6, "decisions_on_other_rows": 1}
    assert f["flip_rate"] == {"value": pytest.approx(3 / 5), "flipped": 3, "not_flipped": 2, "n": 5, "ties": 0,
                              "rejected_only": 1}
    assert f["kept_rate"]["kept"] == 3 and f["kept_rate"]["not_kept"] == 3  # the reject counts as not kept
    j = f["judge"]
    assert (j["true_positive"], j["false_positive"], j["false_negative"], j["true_negative"]) == (1, 1, 1, 1)
    assert j["precision"] == 0.5 and j["recall"] == 0.5 and j["agreement"] == 0.5 and j["n"] == 4
    assert j["edited_left_out"] == 1 and j["name"] == "tfidf"
    assert f["decisions"]["by_decision"]["accepted"] == 3 and f["annotators"] == ["ann"]
    assert f["agreement"] is None and "by_method" not in f
    assert human_figures(ds, rows)["judge"] is None  # no judge ran


def test_several_annotators_agreement_and_methods():
    rows = {"a": "m1", "b": "m1", "c": "m2"}
    ds = [dec("a", "ann", "accepted"), dec("a", "bob", "accepted"),
          dec("b", "ann", "accepted"), dec("b", "bob", "not_flipped"),
          dec("c", "ann", "not_flipped"), dec("c", "bob", "not_flipped"), dec("c", "cy", "accepted")]
    f = human_figures(ds, rows, {"a": True, "b": True, "c": True})
    assert f["flip_rate"]["flipped"] == 1 and f["flip_rate"]["not_flipped"] == 1 and f["flip_rate"]["ties"] == 1
    assert f["judge"]["false_positive"] == 1 and f["judge"]["true_positive"] == 1 and f["judge"]["ties"] == 1
    assert f["agreement"]["shared_items"] == 3 and f["agreement"]["annotators"] == ["ann", "bob", "cy"]
    assert f["decisions"]["by_annotator"]["bob"] == {"accepted": 1, "not_flipped": 2}
    assert set(f["by_method"]) == {"m1", "m2"}
    assert f["by_method"]["m2"]["flip_rate"]["value"] == 0.0 and f["by_method"]["m1"]["reviewed"] == 2
    text = "\n".join(summary_lines(f))
    assert "3 of 3 rows reviewed by 3 annotators" in text and "human flip rate 50.0%" in text
    assert "Krippendorff's alpha" in text


def test_no_decisions_no_figures(run_and_judge, capsys):
    run, judge = run_and_judge
    pairs = load_pairs(run).pairs
    assert review_figures(run, pairs) is None  # no store
    ReviewStore(run).close()  # an empty store
    assert review_figures(run, pairs) is None
    assert main(["evaluate", str(run), "--judge-train", str(judge), "--no-embedding", "--no-bertscore",
                 "--no-progress", *FAST]) == 0
    assert "human" not in json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert "review:" not in capsys.readouterr().err


def test_evaluate_reports_human_figures_from_the_store(run_and_judge, capsys):
    run, judge = run_and_judge
    items = {p.source_id: p.item_id for p in load_pairs(run).pairs}
    with ReviewStore(run) as store:
        store.record(items["1"], "ann", "accepted")
        store.record(items["2"], "ann", "not_flipped")
        store.record(items["3"], "ann", "rejected")
        store.record(items["4"], "ann", "accepted")  # a failed row: not scored without --include-failed
        store.record(items["1"], "bob", "accepted")
    assert main(["evaluate", str(run), "--judge-train", str(judge), "--no-embedding", "--no-bertscore",
                 "--no-progress", *FAST]) == 0
    err = capsys.readouterr().err
    h = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["human"]
    verdicts = read_judgements(run)
    assert h["rows"] == {"in_scope": 3, "reviewed": 3, "decided": 3, "decisions_on_other_rows": 1}
    assert h["flip_rate"]["value"] == 0.5 and h["flip_rate"]["rejected_only"] == 1
    j = h["judge"]
    assert j["name"] == "tfidf-logreg" and j["n"] == 2
    # the judge's own verdicts decide the cells: row 1 people call flipped, row 2 not
    assert j["true_positive"] == int(verdicts[items["1"]]["flipped"])
    assert j["false_negative"] == int(not verdicts[items["1"]]["flipped"])
    assert j["false_positive"] == int(verdicts[items["2"]]["flipped"])
    assert h["agreement"]["shared_items"] == 1 and h["annotators"] == ["ann", "bob"]
    assert "human flip rate 50.0% (1 of 2 rows judged flipped" in err and "precision" in err
    # the same figures from the stored verdicts (what the report reads)
    stored = review_figures(run, [p for p in load_pairs(run).pairs if p.passed], stored_judgements=True)
    assert stored["judge"] == j
    # without a judge: the human figures, no comparison
    assert main(["evaluate", str(run), "--no-embedding", "--no-bertscore", "--no-progress", *FAST, "-o",
                 str(run.parent / "m2.json")]) == 0  # never inside the run directory it reads
    h2 = json.loads((run.parent / "m2.json").read_text(encoding="utf-8"))["human"]
    assert h2["judge"] is None and h2["flip_rate"] == h["flip_rate"]


def test_a_verdict_on_a_changed_text_is_not_used(run_and_judge, capsys):
    run, judge = run_and_judge
    assert main(["evaluate", str(run), "--judge-train", str(judge), "--no-embedding", "--no-bertscore",
                 "--no-progress", *FAST]) == 0
    pairs = load_pairs(run).pairs
    verdicts, name = judge_from_file(run, pairs)
    assert name == "tfidf-logreg" and set(verdicts) == {p.item_id for p in pairs if p.passed}
    pairs[0] = dataclasses.replace(pairs[0], judge_input="another text")
    assert pairs[0].item_id not in judge_from_file(run, pairs)[0]


def test_a_broken_store_is_a_warning_not_a_failure(run_and_judge, capsys):
    run, _ = run_and_judge
    (run / "review.sqlite").write_bytes(b"this is not a database at all" * 100)
    assert main(["evaluate", str(run), "--no-embedding", "--no-bertscore", "--no-progress", *FAST]) == 0
    assert "warning: review decisions left out" in capsys.readouterr().err
    assert "human" not in json.loads((run / "metrics.json").read_text(encoding="utf-8"))
