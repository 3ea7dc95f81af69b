"""Demonstrations: loading pairs, the built-in set, picking per item, word-level edits."""

from __future__ import annotations

import pytest

from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import make_task
from cfaug.config import ConfigError
from cfaug.demonstrations import DemoPool, builtin_demos, edit_spans, load_demos


def test_paired_file_gives_both_directions(fixtures):
    demos = load_demos(fixtures / "imdb_paired.tsv", make_task("sentiment"))
    assert len(demos) == 8  # 4 pairs, both ways
    assert {(d.source_label, d.target) for d in demos} == {("negative", "positive"), ("positive", "negative")}
    first = next(d for d in demos if d.original.startswith("Long, boring"))
    assert first.revised.startswith("Long, fascinating") and first.source_label == "negative"
    assert first.id == "imdb_paired.tsv:batch_id=4:1->2"


def test_originals_and_revisions_matched_by_the_unedited_sentence(fixtures):
    task = make_task("nli", edit_side="premise")
    demos = load_demos(fixtures / "snli_original.tsv", task, fixtures / "snli_revised_premise.tsv")
    assert len(demos) == 12 and all(d.role == "premise" for d in demos)
    forward = [d for d in demos if not d.id.endswith(":reverse")]
    assert all(d.source_label == "neutral" for d in forward)
    assert sorted(d.target for d in forward) == ["contradiction"] * 3 + ["entailment"] * 3
    for d in forward:  # the hypothesis is the original's, the premise is revised
        assert d.fields["premise"] != d.revised
    hyp = make_task("nli", edit_side="hypothesis")
    assert len(load_demos(fixtures / "snli_original.tsv", hyp, fixtures / "snli_revised_hypothesis.tsv")) == 12
    with pytest.raises(ConfigError, match="snli_revised_premise.tsv: no demonstration pairs found; 6 revised row"):
        load_demos(fixtures / "snli_original.tsv", hyp, fixtures / "snli_revised_premise.tsv")


def test_bad_demonstration_files_are_explained(fixtures, tmp_path):
    with pytest.raises(ConfigError, match=r"snli_original.tsv: a paired demonstration file needs a pair id"):
        load_demos(fixtures / "snli_original.tsv", make_task("nli"))
    with pytest.raises(ConfigError, match="demos: .*no such file"):
        load_demos(tmp_path / "missing.tsv", make_task("sentiment"))
    same = tmp_path / "same.tsv"
    same.write_text("text\tlabel\tbatch_id\nGood.\tpositive\t1\nFine.\tpositive\t1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="same.tsv: no demonstration pairs found"):
        load_demos(same, make_task("sentiment"))


def test_built_in_sets_cover_each_task_and_edit_side():
    assert len(builtin_demos(make_task("sentiment"))) == 12
    assert len(builtin_demos(make_task("style"))) == 12
    premise = builtin_demos(make_task("nli", edit_side="premise"))
    hypothesis = builtin_demos(make_task("nli", edit_side="hypothesis"))
    assert len(premise) == len(hypothesis) == 12
    assert {d.role for d in premise} == {"premise"} and {d.role for d in hypothesis} == {"hypothesis"}
    for d in premise + hypothesis:
        other = "hypothesis" if d.role == "premise" else "premise"
        assert d.fields[other] and d.revised != d.original
    with pytest.raises(ConfigError, match="no built-in demonstrations for task 'rating'"):
        builtin_demos(make_task("rating"))


def item(text: str, label: str, target: str, rid: str = "1") -> WorkItem:
    return WorkItem(Record(rid, {"text": text}, label), target)


def test_seeded_selection_prefers_the_same_direction_and_skips_the_items_own_text(fixtures):
    task = make_task("sentiment")
    demos = load_demos(fixtures / "imdb_paired.tsv", task)
    pool = DemoPool(demos, task, k=3)
    picked = pool.select(item("A great film.", "positive", "negative"), seed=7)
    assert len(picked) == 3 and all(d.source_label == "positive" for d in picked)
    assert pool.select(item("A great film.", "positive", "negative"), seed=7) == picked
    assert {d.id for seed in range(20) for d in pool.select(item("x", "positive", "negative"), seed)} == \
        {d.id for d in demos if d.source_label == "positive"}
    own = demos[0]
    mine = item(own.original, own.source_label, own.target)
    for seed in range(10):
        assert all(own.original not in (d.original, d.revised) for d in pool.select(mine, seed))
    # more than the same-direction demonstrations: the others fill up
    assert len(DemoPool(demos, task, k=6).select(item("x", "positive", "negative"), 0)) == 6


def test_ordered_selection_keeps_the_files_order_same_direction_first(fixtures):
    task = make_task("sentiment")
    demos = load_demos(fixtures / "imdb_paired.tsv", task)
    pool = DemoPool(demos, task, k=3, selection="ordered")
    forward = [d for d in demos if d.source_label == "positive"]
    for seed in (0, 5):
        assert pool.select(item("x", "positive", "negative"), seed) == forward[:3]
    assert pool.select(item(forward[0].original, "positive", "negative"), 0) == forward[1:4]


def test_similar_selection_picks_the_closest_originals(fixtures, sentence_encoder):
    task = make_task("sentiment")
    pool = DemoPool(load_demos(fixtures / "imdb_paired.tsv", task), task, k=1, selection="similar",
                    encoder=sentence_encoder)
    rec = Record("1", {"text": "The Elvis impersonator was not good at all; rent the original instead."}, "negative")
    pool.index([rec])
    picked = pool.select(WorkItem(rec, "positive"), seed=0)
    assert picked[0].original.startswith("Not good! Rent or buy the original!")
    assert pool.describe()["selection"] == "similar" and pool.describe()["count"] == 8


def test_pool_parameters_are_checked():
    task = make_task("sentiment")
    with pytest.raises(ConfigError, match="demo_selection must be one of seeded, similar"):
        DemoPool(builtin_demos(task), task, k=2, selection="best")
    with pytest.raises(ConfigError, match="n_demos must be at least 1"):
        DemoPool(builtin_demos(task), task, k=0)


def test_edit_spans_quote_the_changed_phrases():
    assert edit_spans("The movie is the best that I have ever seen.", "The movie is the worst that I have ever seen.") \
        == [("best", "worst")]
    assert edit_spans("A great, moving film.", "A film.") == [("great, moving", "")]
    assert edit_spans("A film.", "A truly bad film!") == [("", "truly bad")]
    assert edit_spans("same text", "Same text!") == []
