"""Review items from a run directory: ids, columns, judges' verdicts, review order and filters."""

from __future__ import annotations

import json
import time

import pytest

from decided_runs import NLI_CONFIG, record, sentiment_row, simple_run, write_run

from cfaug.data.io import DataError
from cfaug.evaluate.judgements import JUDGEMENTS_FILE, text_hash
from cfaug.review.items import load_items
from cfaug.run.decisions import ReviewStore


def test_items_ids_texts_and_labels(tmp_path):
    run = write_run(tmp_path / "run", [
        [sentiment_row(0, confidence=0.8), sentiment_row(1, passed=False)],
        [sentiment_row(2, method="zero-shot.v1")],
    ])
    items = load_items(run)
    assert [it.id for it in items.items] == ["k0#0", "k1#0"]
    assert items.failed_left_out == 1 and items.problems == []
    it = items.items[0]
    assert it.original == {"text": "Review 0: a good film with a fine cast."}
    assert it.rewrite == {"text": "Review 0: a bad film with a weak cast."}
    assert (it.source_label, it.target_label) == ("positive", "negative")  # canonical names
    assert it.own_confidence == 0.8 and it.method == "auto-cad.v1" and it.source_id == "s0"
    assert it.row["meta"]["own_judge"]["name"] == "tfidf-logreg"
    assert items.task.name == "sentiment"
    assert items.columns.text == {"text": "Text"} and items.columns.label == "Sentiment"
    assert items.columns.original == {"text": "original_Text"}
    everything = load_items(run, include_failed=True)
    assert [it.id for it in everything.items] == ["k0#0", "k0#1", "k1#0"]
    assert [it.passed for it in everything.items] == [True, False, True]


def test_confidence_from_meta_confidence_when_no_own_judge(tmp_path):
    row = sentiment_row(0)
    row["meta"]["confidence"] = 0.61
    items = load_items(write_run(tmp_path / "run", [[row], [sentiment_row(1)]]))
    assert [it.own_confidence for it in items.items] == [0.61, None]


def test_nli_items_have_both_sides(tmp_path):
    row = {"premise": "A man sleeps.", "hypothesis": "A man is awake.", "label": "contradiction", "source_id": "p1",
           "original_premise": "A man sleeps.", "original_hypothesis": "A man rests.", "original_label": "entailment",
           "method": "zero-shot.v1", "meta": {}}
    items = load_items(write_run(tmp_path / "run", [[row]], NLI_CONFIG))
    it = items.items[0]
    assert it.original == {"premise": "A man sleeps.", "hypothesis": "A man rests."}
    assert it.rewrite == {"premise": "A man sleeps.", "hypothesis": "A man is awake."}
    assert (it.source_label, it.target_label) == ("entailment", "contradiction")


def test_a_run_still_writing_is_read_but_not_touched(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    results = run / "results.jsonl"
    with open(results, "a", encoding="utf-8") as fh:
        fh.write('{"key": "k9", "counterfactuals": [{"Text": "half')
    before = results.read_bytes()
    assert len(load_items(run).items) == 2
    assert results.read_bytes() == before


def test_a_retried_item_uses_its_retry_and_bad_rows_are_named(tmp_path):
    run = tmp_path / "run"
    write_run(run, [[sentiment_row(0)]])
    with open(run / "results.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"key": "k1", "status": "error", "counterfactuals": []}) + "\n")
        fh.write("not json\n")
        fh.write(json.dumps({"key": "k1", "status": "ok", "counterfactuals": [sentiment_row(1), {"Sentiment": "x"}]})
                 + "\n")
    items = load_items(run)
    assert [it.id for it in items.items] == ["k0#0", "k1#0"]
    assert items.problems == [f"{run / 'results.jsonl'}, line 3: not valid JSON",
                              f"{run / 'results.jsonl'}, line 4, row 1: no text in column 'Text'"]


def test_not_a_run_directory(tmp_path):
    with pytest.raises(DataError, match="no config.json"):
        load_items(tmp_path)
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(DataError, match="no results.jsonl"):
        load_items(tmp_path)
    with pytest.raises(DataError, match="not a directory"):
        load_items(tmp_path / "nope")


def test_independent_verdicts_from_judgements_file(tmp_path):
    run = write_run(tmp_path / "run", [[sentiment_row(0, confidence=0.9)], [sentiment_row(1, confidence=0.9)],
                                       [sentiment_row(2, confidence=0.9)]])
    texts = {f"k{i}#0": f"Review {i}: a bad film with a weak cast." for i in range(3)}
    lines = [
        {"item": "k0#0", "judge": "sst2", "predicted": "positive", "target_prob": 0.1, "flipped": False,
         "text_sha1": text_hash(texts["k0#0"])},
        {"item": "k1#0", "judge": "sst2", "predicted": "negative", "target_prob": 0.9, "flipped": True,
         "text_sha1": text_hash("an older text of k1")},  # judged another text: ignored
    ]
    (run / JUDGEMENTS_FILE).write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    items = load_items(run).by_id()
    assert items["k0#0"].independent["predicted"] == "positive"
    assert items["k0#0"].independent_flipped is False and items["k0#0"].own_flipped is True
    assert items["k0#0"].judges_disagree
    assert items["k1#0"].independent is None and items["k2#0"].independent is None
    assert not items["k2#0"].judges_disagree


def test_review_order_disagreement_then_least_sure_then_file_order(tmp_path):
    confidences = [0.95, 0.6, None, 0.3, 0.9, 0.45, 0.9]
    run = write_run(tmp_path / "run", [[sentiment_row(i, confidence=c)] for i, c in enumerate(confidences)])
    # the independent judge disagrees on k4 (own: flipped, independent: not)
    (run / JUDGEMENTS_FILE).write_text(json.dumps(
        {"item": "k4#0", "judge": "j", "predicted": "positive", "target_prob": 0.2, "flipped": False}) + "\n",
        encoding="utf-8")
    order = [it.id for it in load_items(run).ordered()]
    # judges disagree (k4); then by distance from 0.5: k5 .05, k1 .1, k3 .2, k6 .4, k0 .45; no confidence last
    assert order == ["k4#0", "k5#0", "k1#0", "k3#0", "k6#0", "k0#0", "k2#0"]


def test_own_threshold_counts_for_sureness(tmp_path):
    # 0.6 is 0.1 from 0.5; 0.72 is 0.22 from 0.5 but 0.02 from its own judge's threshold 0.7
    run = write_run(tmp_path / "run", [[sentiment_row(0, confidence=0.6)],
                                       [sentiment_row(1, confidence=0.72, threshold=0.7)]])
    assert [it.id for it in load_items(run).ordered()] == ["k1#0", "k0#0"]


def test_filters_method_confidence_undecided(tmp_path):
    confidences = [0.9, 0.2, 0.6, None, 0.4, 0.8]
    run = write_run(tmp_path / "run", [[sentiment_row(i, confidence=c, method="a" if i % 2 == 0 else "b")]
                                       for i, c in enumerate(confidences)])
    items = load_items(run)
    assert {it.id for it in items.ordered(method="a")} == {"k0#0", "k2#0", "k4#0"}
    assert {it.id for it in items.ordered(confidence=(0.4, 0.8))} == {"k2#0", "k4#0", "k5#0"}
    assert {it.id for it in items.ordered(confidence=(None, 0.3))} == {"k1#0"}
    assert {it.id for it in items.ordered(method="b", confidence=(0.5, None))} == {"k5#0"}
    record(run, [("k0#0", "ann", "accepted"), ("k2#0", "ann", "rejected"), ("k4#0", "bob", "accepted")])
    with ReviewStore(run) as store:
        store.undo("ann")  # k2 is undecided again for ann
        assert {it.id for it in items.ordered(store=store, annotator="ann")} == {f"k{i}#0" for i in range(1, 6)}
        assert {it.id for it in items.ordered(method="a", store=store, annotator="bob")} == {"k0#0", "k2#0"}
        with pytest.raises(ValueError, match="both a store and an annotator"):
            items.ordered(store=store)


def test_a_large_run_opens_quickly(tmp_path):
    """20,000 items (a fifth of the 100,000 the bench measures) open and order in well under a second each
    on an idle machine; the bound here leaves room for a loaded one."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"task": {"name": "sentiment", "edit_roles": ["text"]},
                                                 "schema": {"text_cols": {"text": "Text"}, "label_col": "Sentiment"}}))
    with open(run / "results.jsonl", "w", encoding="utf-8") as fh:
        for i in range(20_000):
            fh.write(json.dumps({"key": f"k{i}", "counterfactuals": [sentiment_row(i, confidence=(i % 89) / 89)]}) + "\n")
    start = time.perf_counter()
    items = load_items(run)
    order = items.ordered()
    elapsed = time.perf_counter() - start
    assert len(order) == 20_000 and elapsed < 5.0


def test_choice_order_puts_the_lowest_choice_scores_first(tmp_path):
    rows = []
    for i, score in enumerate([0.9, None, 0.2, 1.4]):
        row = sentiment_row(i, confidence=0.5 + i / 10)
        if score is not None:
            row["meta"]["choice"] = {"score": score, "rank": 1, "candidates": 3}
        rows.append([row])
    items = load_items(write_run(tmp_path / "run", rows))
    assert [it.choice_score for it in items.items] == [0.9, None, 0.2, 1.4]
    default = [it.source_id for it in items.ordered()]
    items = load_items(tmp_path / "run")
    items.order_by = "choice"
    assert [it.source_id for it in items.ordered()] == ["s2", "s0", "s3", "s1"]  # no score: last
    assert default != ["s2", "s0", "s3", "s1"]  # the judges' order differs
