"""LASS's prompt search (Algorithm 1): examples inserted where they help most; human marks or a proxy."""

from __future__ import annotations

import csv

import pytest

from cfaug.data.records import Record
from cfaug.methods.lass.prompt_search import (AnnotationNeeded, HumanMarks, MarksNeeded, ProxyScorer, SearchSettings,
                                              prompt_id, search_prompt, write_demos)

REVIEWS = [Record(f"r{i}", {"text": f"review {i} was great ."}, "positive") for i in range(6)]
TARGETS = {r.id: "negative" for r in REVIEWS}
START = [("a fine film .", "positive", "a dull film .", "negative")]
ANNOTATED = {r.id: f"review {r.id[1:]} was awful ." for r in REVIEWS}


class Outcome:
    """Succeeds on r2-r5 once r0's example is in the prompt, and on r1 only when r0's example comes first."""

    kind = "scripted"

    def __init__(self):
        self.calls = []

    def generate(self, seq, items, targets, temperature, sample):
        self.calls.append((tuple(seq), tuple(r.id for r in items)))
        has = any(p[0] == "review 0 was great ." for p in seq)
        first = bool(seq) and seq[0][0] == "review 0 was great ."
        return ["ok" if (r.id in ("r2", "r3", "r4", "r5") and has) or (r.id == "r1" and first) else "bad"
                for r in items]

    def score(self, pid, items, targets, outputs):
        return [int(o == "ok") for o in outputs]


def test_the_example_goes_where_it_helps_and_the_search_stops_at_delta():
    o = Outcome()
    result = search_prompt(REVIEWS, TARGETS, START, ANNOTATED, o.generate, o,
                           SearchSettings(delta=0.8, seed=2), log=lambda m: None)
    assert result.start_success == 0.0
    # seed 2 draws r0 first; position 0 (before the start pair) also wins r1: success 5/5 on I minus r0
    assert result.steps[0].example == "review 0 was great ." and result.steps[0].position == 0
    assert result.steps[0].scores == [1.0, 0.8]
    assert result.success == 1.0 and "reached delta" in result.stopped
    assert result.sequence[0] == ("review 0 was great .", "positive", "review 0 was awful .", "negative")
    # the examples used are no longer evaluated
    assert all("r0" not in ids for seq, ids in o.calls[1:])


def test_a_small_gain_stops_the_search():
    o = Outcome()
    never = lambda seq, items, targets, temperature, sample: ["bad" for _ in items]  # noqa: E731
    result = search_prompt(REVIEWS, TARGETS, START, ANNOTATED, never, o, SearchSettings(epsilon=0.1, seed=1))
    assert len(result.steps) == 1 and result.success == 0.0 and "below epsilon" in result.stopped
    assert len(result.sequence) == 2  # the example stays in, as Algorithm 1 keeps the best ordering


def test_an_unannotated_draw_asks_a_human(tmp_path):
    o = Outcome()
    with pytest.raises(AnnotationNeeded, match="review r"):
        search_prompt(REVIEWS, TARGETS, START, {}, o.generate, o, SearchSettings(seed=0),
                      annotations_path=tmp_path / "ann.tsv")


def test_the_proxy_annotates_with_an_accepted_sample():
    calls = []

    def generate(seq, items, targets, temperature, sample):
        calls.append((temperature, sample))
        if temperature == 0.7:  # the annotation samples: the second is good
            return ["review was awful ." if sample == 2 else "review was great ." for _ in items]
        return ["review was awful ." if len(seq) > 1 else "review was great ." for _ in items]

    proxy = ProxyScorer(target_prob=lambda outs, t: [0.9 if "awful" in o else 0.1 for o in outs],
                        similarity=lambda a, b: [0.9] * len(a), perplexity=lambda t: 10.0)
    result = search_prompt(REVIEWS, TARGETS, START, {}, generate, proxy, SearchSettings(seed=0))
    assert result.scorer == "proxy" and result.success == 1.0
    assert result.sequence[0][2] == "review was awful ." or result.sequence[1][2] == "review was awful ."
    assert (0.7, 1) in calls and (0.7, 2) in calls


def test_proxy_checks_label_similarity_and_fluency():
    proxy = ProxyScorer(target_prob=lambda outs, t: [0.9, 0.9, 0.2, 0.9],
                        similarity=lambda a, b: [0.9, 0.1, 0.9, 0.9],
                        perplexity=lambda t: 100.0 if t == "zz" else 10.0)
    items = REVIEWS[:4]
    assert proxy.score("p", items, ["negative"] * 4, ["ok", "ok", "ok", "zz"]) == [1, 0, 0, 0]


def test_human_marks_are_exported_then_read_back(tmp_path):
    marks = HumanMarks(tmp_path / "marks.tsv")
    items = REVIEWS[:2]
    with pytest.raises(MarksNeeded, match="2 outputs wait"):
        marks.score("p1", items, ["negative"] * 2, ["out a", "out b"])
    with open(marks.path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert [(r["prompt"], r["id"], r["output"], r["success"]) for r in rows] == [
        ("p1", "r0", "out a", ""), ("p1", "r1", "out b", "")]
    rows[0]["success"], rows[1]["success"] = "1", "0"
    with open(marks.path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    assert marks.score("p1", items, ["negative"] * 2, ["out a", "out b"]) == [1, 0]


def test_demos_file_and_prompt_id(tmp_path):
    write_demos(START, tmp_path / "d.tsv")
    assert (tmp_path / "d.tsv").read_text().splitlines() == [
        "batch_id\tlabel\ttext", "0\tpositive\ta fine film .", "0\tnegative\ta dull film ."]
    assert prompt_id(START) == prompt_id(list(START)) != prompt_id(START * 2)


class StartOutcome:
    """Under the starting prompt only r0 succeeds; any example then makes everything succeed."""

    kind = "scripted"

    def generate(self, seq, items, targets, temperature, sample):
        return ["ok" if len(seq) > len(START) or r.id == "r0" else "bad" for r in items]

    def score(self, pid, items, targets, outputs):
        return [int(o == "ok") for o in outputs]


def _first_examples(first_candidates):
    o = StartOutcome()
    drawn = set()
    for seed in range(30):
        result = search_prompt(REVIEWS, TARGETS, START, ANNOTATED, o.generate, o,
                               SearchSettings(seed=seed, first_candidates=first_candidates))
        assert result.first_candidates == first_candidates and result.start_success == pytest.approx(1 / 6)
        drawn.add(result.steps[0].example)
    return drawn


def test_algorithm_1_draws_the_first_example_from_all_reviews_successes_included():
    # C = I (the paper): the review the starting prompt already rewrites well can be drawn too
    assert "review 0 was great ." in _first_examples("all")
    # the default draws only from the failures
    failures = _first_examples("failures")
    assert "review 0 was great ." not in failures and len(failures) > 1


def test_first_candidates_is_checked():
    o = StartOutcome()
    with pytest.raises(ValueError, match="first_candidates"):
        search_prompt(REVIEWS, TARGETS, START, ANNOTATED, o.generate, o, SearchSettings(first_candidates="some"))


def test_the_paper_preset_of_the_command_draws_from_all_reviews():
    from cfaug.cli import build_parser
    from cfaug.cli.prompt_search import FIRST_CANDIDATES, first_candidates
    from cfaug.methods.lass import prompt_search

    assert FIRST_CANDIDATES == prompt_search.FIRST_CANDIDATES
    base = ["prompt-search", "eval.tsv", "-o", "out", "--judge-train", "train.tsv"]
    parse = build_parser().parse_args
    assert first_candidates(parse(base)) == "failures" == SearchSettings().first_candidates
    assert first_candidates(parse([*base, "--preset", "paper"])) == "all"
    assert first_candidates(parse([*base, "--preset", "paper", "--first-candidates", "failures"])) == "failures"
    assert first_candidates(parse([*base, "--first-candidates", "all"])) == "all"


def test_reviewed_marks_ask_for_each_output_once_and_fail_an_empty_one(tmp_path):
    from cfaug.methods.lass.prompt_search import ReviewedMarks

    asked, marks = [], {}
    scorer = ReviewedMarks(tmp_path / "review", read=lambda: dict(marks),
                           request=lambda pid, waiting: asked.append((pid, [(r.id, t, o) for r, t, o in waiting])))
    items = REVIEWS[:3]
    with pytest.raises(MarksNeeded, match="2 outputs wait for your review: run 'cfaug review serve") as exc:
        scorer.score("p1", items, ["negative"] * 3, ["out a", "out b", "  "])  # the empty output is not asked
    assert asked == [("p1", [("r0", "negative", "out a"), ("r1", "negative", "out b")])]
    assert exc.value.review and exc.value.pending == {("r0", "out a"), ("r1", "out b")}
    # another prompt with one output in common: waits gathered over prompts count each output once
    with pytest.raises(MarksNeeded) as other:
        scorer.score("p2", items[:2], ["negative"] * 2, ["out a", "out c"])
    merged = exc.value.merge(other.value)
    assert merged.count == 3 and "3 outputs wait for your review" in str(merged)
    marks.update({("r0", "out a"): 1, ("r1", "out b"): 0})
    assert scorer.score("p1", items, ["negative"] * 3, ["out a", "out b", ""]) == [1, 0, 0]
    assert scorer.kind == "human"
    marks[("r0", "out a")] = 2
    with pytest.raises(ValueError, match="0 or 1"):
        scorer.score("p1", items[:1], ["negative"], ["out a"])


def test_the_search_gathers_review_waits_over_all_positions(tmp_path):
    from cfaug.methods.lass.prompt_search import ReviewedMarks

    # every output is new at every position: the start prompt is marked, then all trial outputs are asked
    marks = {(r.id, "start"): 0 for r in REVIEWS}
    asked = set()

    def generate(seq, items, targets, temperature, sample):
        return ["start" if len(seq) == 1 else f"pos{[p[0] for p in seq].index('review 0 was great .')}"
                for _ in items]

    scorer = ReviewedMarks(tmp_path, read=lambda: marks,
                           request=lambda pid, waiting: asked.update((r.id, o) for r, _, o in waiting))
    with pytest.raises(MarksNeeded) as exc:
        search_prompt(REVIEWS, TARGETS, START, ANNOTATED, generate, scorer, SearchSettings(seed=2))
    # r0 is the example (seed 2); the five other reviews at two positions: ten outputs, each asked once
    assert exc.value.count == 10 == len(asked) and exc.value.review
