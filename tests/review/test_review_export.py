"""Export of reviewed rows: which rows, meta.review, edits, majority of annotators, formats, dataset card."""

from __future__ import annotations

import csv
import json
import re

import pytest

from decided_runs import record, simple_run, write_run

from cfaug.review.export import (
    NothingToExport, combine, export_decisions, export_reviewed, parse_decisions, reviewed_rows, text_changes,
)
from cfaug.review.items import load_items
from cfaug.run.decisions import Decision, ReviewStore


def d(seq, item, who, decision, label=None, fields=None, seconds=None):
    return Decision(seq, item, who, decision, fields, label, 1_700_000_000.0 + seq, seconds, None)


def read_jsonl(path):
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


# -- combining annotators ---------------------------------------------------------------------------------------
def test_majority_wins_ties_are_none_skips_do_not_vote():
    v = combine([d(1, "i", "a", "accepted"), d(2, "i", "b", "accepted"), d(3, "i", "c", "rejected")])
    assert v.decision == "accepted" and v.votes == {"accepted": 2, "rejected": 1}
    assert v.annotators == ["a", "b", "c"] and [x.annotator for x in v.deciding] == ["a", "b"]
    tie = combine([d(1, "i", "a", "accepted"), d(2, "i", "b", "rejected"), d(3, "i", "c", "skipped")])
    assert tie.decision is None and tie.annotators == ["a", "b"]
    assert combine([d(1, "i", "a", "skipped")]) is None
    # other_label votes count per label named
    split = combine([d(1, "i", "a", "other_label", label="neutral"), d(2, "i", "b", "other_label", label="positive")])
    assert split.decision is None
    same = combine([d(1, "i", "a", "other_label", label="neutral"), d(2, "i", "b", "other_label", label="neutral"),
                    d(3, "i", "c", "accepted")])
    assert (same.decision, same.label) == ("other_label", "neutral")


def test_text_changes_rebuild_the_edited_text():
    machine = "The film was bad, and the cast was weak."
    edited = "The film was awful, and the cast was weak and tired."
    changes = text_changes(machine, edited)
    assert changes == [{"at": 13, "old": "bad", "new": "awful"}, {"at": 39, "old": "", "new": " and tired"}]
    rebuilt, pos = [], 0
    for c in changes:
        rebuilt += [machine[pos:c["at"]], c["new"]]
        pos = c["at"] + len(c["old"])
    assert "".join(rebuilt) + machine[pos:] == edited
    assert text_changes("same", "same") == []


def test_parse_decisions():
    assert parse_decisions("accepted, edited,accepted") == ("accepted", "edited")
    with pytest.raises(ValueError, match="unknown decision 'kept'"):
        parse_decisions("accepted,kept")
    with pytest.raises(ValueError, match="unknown decision 'skipped'"):
        parse_decisions("skipped")


# -- the rows -----------------------------------------------------------------------------------------------------
@pytest.fixture
def decided(tmp_path):
    run = simple_run(tmp_path / "run", 7)
    record(run, [
        ("k0#0", "ann", "accepted", {"seconds": 2.0}),
        ("k1#0", "ann", "edited", {"fields": {"text": "Review 1: an awful film with a weak cast."}, "seconds": 9.0}),
        ("k1#0", "bob", "edited", {"fields": {"text": "Review 1: a dire film with a weak cast."}, "seconds": 11.0}),
        ("k2#0", "ann", "accepted"), ("k2#0", "bob", "rejected"),           # a tie: left out
        ("k3#0", "ann", "other_label", {"label": "positive"}),
        ("k4#0", "bob", "not_flipped"),
        ("k5#0", "ann", "rejected"),
        ("k6#0", "ann", "skipped"),
        ("gone#0", "ann", "accepted"),                                     # not a row of the run
    ])
    return run


def test_reviewed_rows_default_accepted_and_edited(decided):
    with ReviewStore(decided) as store:
        rows, summary = reviewed_rows(load_items(decided), store.current())
    assert [r["source_id"] for r in rows] == ["s0", "s1"]
    assert summary.by_decision == {"accepted": 1, "edited": 1}
    assert (summary.ties, summary.not_chosen, summary.only_skipped) == (1, 3, 1)
    assert summary.unknown_count == 1 and summary.unknown_items == ["gone#0"]
    accepted, edited = rows
    assert accepted["Text"] == "Review 0: a bad film with a weak cast."
    review = accepted["meta"]["review"]
    assert review["annotators"] == ["ann"] and review["decision"] == "accepted" and review["edit"] is None
    assert review["seconds"] == 2.0 and review["time"].endswith("Z")
    assert accepted["meta"]["passed"] is True  # the method's meta is kept
    # both edited: the latest edit is exported
    assert edited["Text"] == "Review 1: a dire film with a weak cast."
    r = edited["meta"]["review"]
    assert r["votes"] == {"edited": 2} and r["edit_by"] == "bob" and r["seconds"] == 10.0
    assert r["edit"] == {"Text": {"changes": [{"at": 12, "old": "bad", "new": "dire"}], "token_edit_rate": 0.0909}}
    assert edited["original_Text"] == "Review 1: a good film with a fine cast."


def test_relabelled_rows(decided):
    with ReviewStore(decided) as store:
        rows, _ = reviewed_rows(load_items(decided), store.current(), ("other_label", "not_flipped", "rejected"))
    by = {r["source_id"]: r for r in rows}
    assert set(by) == {"s3", "s4", "s5"}
    assert by["s3"]["Sentiment"] == "Positive" and by["s3"]["meta"]["review"]["label"] == "positive"  # as the run spells it
    assert by["s4"]["Sentiment"] == "Positive" and by["s4"]["meta"]["review"]["label"] == "positive"
    assert by["s5"]["Sentiment"] == "Negative" and "label" not in by["s5"]["meta"]["review"]


def test_export_jsonl_and_csv(decided, tmp_path):
    s = export_reviewed(decided, tmp_path / "out.jsonl")
    rows = read_jsonl(tmp_path / "out.jsonl")
    assert s.rows == 2 and s.format == "jsonl" and s.card is None
    assert list(rows[0]) == ["Text", "Sentiment", "source_id", "original_Text", "original_Sentiment", "method", "meta"]
    assert rows[1]["meta"]["review"]["decision"] == "edited"
    assert s.agreement["shared_items"] == 2
    export_reviewed(decided, tmp_path / "out.csv")
    with open(tmp_path / "out.csv", encoding="utf-8", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert json.loads(table[1]["meta"])["review"]["edit_by"] == "bob"
    assert not (tmp_path / "README.md").exists()


def test_export_parquet_writes_a_card(decided, tmp_path):
    import pandas as pd
    import yaml

    metrics = {"groups": {"auto-cad.v1": {"metrics": [{"name": "flip_rate", "value": 0.75}, {"name": "edit_rate",
                                                                                                 "value": 0.1}]}}}
    (decided / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    s = export_reviewed(decided, tmp_path / "data" / "train.parquet", decisions=("accepted", "edited", "other_label"),
                        license="cc-by-4.0")
    frame = pd.read_parquet(tmp_path / "data" / "train.parquet")
    assert len(frame) == 3 and json.loads(frame["meta"][1])["review"]["decision"] == "edited"
    card = (tmp_path / "data" / "train.parquet.README.md").read_text(encoding="utf-8")
    assert s.card == str(tmp_path / "data" / "train.parquet.README.md")
    front = yaml.safe_load(card.split("---\n")[1])
    assert front["license"] == "cc-by-4.0" and front["task_ids"] == ["sentiment-classification"]
    assert front["size_categories"] == ["n<1K"]
    c = front["cfaug"]
    # the labels as the rows spell them (the sizes count those spellings)
    assert c["task"] == "sentiment" and c["labels"] == ["Negative", "Positive"]
    assert "(labels: Negative, Positive)" in card
    assert c["sizes"]["rows"] == 3 and c["sizes"]["by_label"] == {"Negative": 2, "Positive": 1}
    assert c["source_data"]["sha256"] == "ab" * 32
    assert c["method"] == {"name": "auto-cad.v1", "parameters": {"variants": "rm,rep"}, "seed": 3,
                           "cfaug_version": "9.9.9"}
    assert c["metrics"] == {"auto-cad.v1": {"flip_rate": 0.75, "edit_rate": 0.1}}
    assert c["review"]["decisions_exported"] == {"accepted": 1, "edited": 1, "other_label": 1}
    assert c["review"]["ties_left_out"] == 1 and c["review"]["annotators"] == ["ann", "bob"]
    assert c["review"]["agreement"]["cohen_kappa"] is not None
    assert "| flip_rate | 0.7500 |" in card and "`cc-by-4.0`" in card


def test_parquet_card_does_not_replace_someone_elses_readme(decided, tmp_path):
    (tmp_path / "README.md").write_text("# my project\n", encoding="utf-8")
    s = export_reviewed(decided, tmp_path / "train.parquet")
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "# my project\n"
    assert s.card == str(tmp_path / "train.parquet.README.md")
    assert "license: unknown" in (tmp_path / "train.parquet.README.md").read_text(encoding="utf-8")


def test_each_export_has_a_card_of_its_own(decided, tmp_path):
    """Two exports into one folder, with different licences: each card describes its own file."""
    a = export_reviewed(decided, tmp_path / "train.parquet", license="cc-by-4.0")
    b = export_reviewed(decided, tmp_path / "relabelled.parquet", decisions=("other_label", "not_flipped"),
                        license="cc0-1.0")
    assert a.card == str(tmp_path / "train.parquet.README.md")
    assert b.card == str(tmp_path / "relabelled.parquet.README.md")
    assert "license: cc-by-4.0" in (tmp_path / "train.parquet.README.md").read_text(encoding="utf-8")
    second = (tmp_path / "relabelled.parquet.README.md").read_text(encoding="utf-8")
    assert "license: cc0-1.0" in second and "other_label: 1" in second
    assert not (tmp_path / "README.md").exists()
    again = export_reviewed(decided, tmp_path / "train.parquet", license="mit")  # the same export again: its card
    assert again.card == a.card and "license: mit" in (tmp_path / "train.parquet.README.md").read_text(encoding="utf-8")
    assert "license: cc0-1.0" in (tmp_path / "relabelled.parquet.README.md").read_text(encoding="utf-8")


def test_decisions_per_annotator(decided, tmp_path):
    """Every annotator's live decision, one row each: who decided what, when, with the combined decision the
    default export takes (an even split is a tie, which it leaves out)."""
    s = export_decisions(decided, tmp_path / "decisions.jsonl")
    rows = read_jsonl(tmp_path / "decisions.jsonl")
    assert s.rows == len(rows) == 10 and s.annotators == ["ann", "bob"] and s.format == "jsonl"
    got = [(r["item"], r["annotator"], r["decision"], r["combined"]) for r in rows]
    assert got == [("k0#0", "ann", "accepted", "accepted"),
                   ("k1#0", "ann", "edited", "edited"), ("k1#0", "bob", "edited", "edited"),
                   ("k2#0", "ann", "accepted", "tie"), ("k2#0", "bob", "rejected", "tie"),
                   ("k3#0", "ann", "other_label", "other_label"), ("k4#0", "bob", "not_flipped", "not_flipped"),
                   ("k5#0", "ann", "rejected", "rejected"), ("k6#0", "ann", "skipped", None),
                   ("gone#0", "ann", "accepted", "accepted")]
    first = rows[0]
    assert list(first) == ["item", "source_id", "method", "source_label", "target_label", "annotator", "decision",
                           "label", "edited", "time", "seconds", "combined"]
    assert first["source_id"] == "s0" and first["method"] == "auto-cad.v1" and first["seconds"] == 2.0
    assert first["source_label"] == "positive" and first["target_label"] == "negative"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", first["time"])
    assert rows[2]["edited"] == {"Text": "Review 1: a dire film with a weak cast."}
    assert rows[5]["label"] == "positive" and rows[0]["label"] is None and rows[0]["edited"] is None
    assert rows[-1]["source_id"] is None  # a decision on an id that is not a row of the run is still written
    # a choice of decisions, and a table format (the edit as JSON in its cell)
    s = export_decisions(decided, tmp_path / "ties.csv", decisions=("accepted", "rejected", "edited"))
    with open(tmp_path / "ties.csv", encoding="utf-8", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert s.rows == len(table) == 7 and s.format == "csv"
    assert json.loads(table[1]["edited"]) == {"Text": "Review 1: an awful film with a weak cast."}
    other = simple_run(tmp_path / "other", 1)
    with pytest.raises(NothingToExport, match="no review decisions yet"):
        export_decisions(other, tmp_path / "none.jsonl")
    record(other, [("k0#0", "ann", "rejected")])
    with pytest.raises(NothingToExport, match=r"no live decision is not_flipped \(1 decided otherwise\)"):
        export_decisions(other, tmp_path / "none.jsonl", decisions=("not_flipped",))
    assert not (tmp_path / "none.jsonl").exists()


def test_export_hugging_face_dataset_with_card(decided, tmp_path):
    import datasets

    out = tmp_path / "hf"
    s = export_reviewed(decided, out, fmt="hf")
    ds = datasets.load_from_disk(str(out))
    assert ds.num_rows == 2 and json.loads(ds[1]["meta"])["review"]["decision"] == "edited"
    assert s.card == str(out / "README.md") and (out / "README.md").read_text(encoding="utf-8").startswith("---\n")


def test_nothing_to_export(tmp_path):
    run = simple_run(tmp_path / "run", 2)
    with pytest.raises(NothingToExport, match="no review decisions yet"):
        export_reviewed(run, tmp_path / "out.jsonl")
    assert not (run / "review.sqlite").exists()  # exporting creates no store
    ReviewStore(run).close()  # a store that a server opened, with nothing decided in it
    with pytest.raises(NothingToExport, match="no decision recorded yet"):
        export_reviewed(run, tmp_path / "out.jsonl")
    record(run, [("k0#0", "ann", "rejected")])
    with pytest.raises(NothingToExport, match=r"no item has the decision accepted or edited \(1 decided otherwise"):
        export_reviewed(run, tmp_path / "out.jsonl")
    with ReviewStore(run) as store:
        store.undo("ann")
    with pytest.raises(NothingToExport, match="every decision recorded was undone"):
        export_reviewed(run, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


def test_edited_nli_hypothesis(tmp_path):
    from decided_runs import NLI_CONFIG

    row = {"premise": "A man sleeps.", "hypothesis": "A man is awake.", "label": "contradiction", "source_id": "p1",
           "original_premise": "A man sleeps.", "original_hypothesis": "A man rests.", "original_label": "entailment",
           "method": "zero-shot.v1", "meta": {}}
    run = write_run(tmp_path / "run", [[row]], NLI_CONFIG)
    record(run, [("k0#0", "ann", "edited", {"fields": {"hypothesis": "A man is wide awake."}})])
    export_reviewed(run, tmp_path / "out.jsonl")
    (out,) = read_jsonl(tmp_path / "out.jsonl")
    assert out["hypothesis"] == "A man is wide awake." and out["premise"] == "A man sleeps."
    assert out["meta"]["review"]["edit"] == {
        "hypothesis": {"changes": [{"at": 9, "old": "", "new": "wide "}], "token_edit_rate": 0.2}}
