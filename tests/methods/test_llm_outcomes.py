"""What an LLM method's run makes of its answers, end to end against the loopback test server (``cfaug augment``):

* an item whose answers hold nothing readable gets no counterfactual (the model answered: no failure, exit 0),
  its line marked ``details.unreadable``; ``--retry-failed`` draws it again with a new seed and a temperature of
  at least ``REDRAW_TEMPERATURE`` (``draw: 1``) and writes its row when the new answer is readable;
* samples are candidates: an unreadable sample is dropped (and named in the row's meta), the others written;
* every request's ``max_tokens`` is bounded by the source (``BUDGET_FACTOR`` x its budget), the longer-budget
  retry of a cut-off answer included;
* rows are written in their source's surface form (case and tokenization), whatever the method;
* an answer that repeats its source but for function words fails the flip check, with its note."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.methods.llm_method import BUDGET_FACTOR, REDRAW_TEMPERATURE

from cfaug_tests_llm_server import FakeLLM, Shaped, cut_at_max_tokens  # noqa: E402  (loaded by tests/conftest.py)

pytestmark = pytest.mark.usefixtures("isolated_llm_cache")

GOOD = "a great , moving film ."
BAD = "a dull and tired plot ."
REFUSAL = "I would rather not."


def write_reviews(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("Sentiment\tText\n" + "".join(f"{lab}\t{text}\n" for lab, text in rows), encoding="utf-8")
    return path


def augment(inp: Path, out: Path, srv: FakeLLM, *extra: str, method: str = "zero-shot") -> int:
    return main(["augment", str(inp), "-o", str(out), "--method", method, "--llm-base-url", srv.base_url,
                 "--llm-model", "test-model", "--no-progress", "--concurrency", "2", *extra])


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def budget(text: str) -> int:
    """The budget of a rewrite of ``text`` (``max_tokens`` unset): a third of its characters plus 64."""
    return len(text) // 3 + 64


def text_of(prompt: str) -> str:
    """The source a rewrite prompt quotes last."""
    return GOOD if GOOD in prompt else BAD


# -- unreadable answers: no counterfactual, exit 0; --retry-failed draws them again --------------------------

def redraw_reply(body: dict, prompt: str) -> str:
    """The BAD review's answers are unreadable unless drawn at a redraw's temperature; the GOOD one's always
    readable."""
    if BAD in prompt:
        if float(body.get("temperature") or 0.0) < REDRAW_TEMPERATURE:
            return REFUSAL
        return "<revised>A lively and fresh plot.</revised>"
    return "<revised>A terrible, tedious film.</revised>"


def test_unreadable_answers_give_none_and_retry_failed_draws_the_item_again_with_a_new_seed(tmp_path, capsys):
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", GOOD), ("Negative", BAD)])
    out = tmp_path / "out.jsonl"
    results = tmp_path / "out.jsonl.run" / "results.jsonl"
    with FakeLLM(default_reply=redraw_reply) as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none") == 0  # nothing failed: the model answered
        first = [r.body for r in srv.requests if BAD in r.prompt]
        err = capsys.readouterr().err
        assert [row["Text"] for row in read_jsonl(out)] == ["a terrible , tedious film ."]
        assert re.search(r"items with none +1\b", err) and not re.search(r"items failed +[1-9]", err)
        [none] = [line for line in read_jsonl(results) if line["source_id"] == "2"]
        assert none["status"] == "no_counterfactual" and "error" not in none and "draw" not in none
        assert none["reason"].startswith("no readable answer in 3 attempt(s)")
        assert none["details"]["unreadable"] is True and none["details"]["answers"] == [REFUSAL] * 3
        assert len(first) == 3 and {b["temperature"] for b in first} == {0.0}

        srv.requests.clear()
        assert augment(inp, out, srv, "-p", "flip_check=none", "--retry-failed") == 0
        again = [r.body for r in srv.requests]
        err = capsys.readouterr().err
    assert "--retry-failed: 1 item(s) whose answers held nothing readable are drawn again with new seeds" in err
    assert again and all(BAD in r.prompt for r in srv.requests)  # the finished item is not asked again
    assert {b["seed"] for b in again}.isdisjoint({b["seed"] for b in first})  # a new seed
    assert all(b["temperature"] >= REDRAW_TEMPERATURE for b in again)
    lines = [line for line in read_jsonl(results) if line["source_id"] == "2"]
    assert lines[-1]["status"] == "ok" and lines[-1]["draw"] == 1
    assert sorted(row["Text"] for row in read_jsonl(out)) == ["a lively and fresh plot .", "a terrible , tedious film ."]


def test_a_redraw_that_is_still_unreadable_stays_none_with_its_draw(tmp_path, capsys):
    inp = write_reviews(tmp_path / "in.tsv", [("Negative", BAD)])
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=REFUSAL) as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none", "-p", "parse_retries=0") == 0
        assert augment(inp, out, srv, "-p", "flip_check=none", "-p", "parse_retries=0", "--retry-failed") == 0
        seeds = [r.body["seed"] for r in srv.requests]
    lines = read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")
    assert [(line["status"], line.get("draw"), line["details"]["unreadable"]) for line in lines] == [
        ("no_counterfactual", None, True), ("no_counterfactual", 1, True)]
    assert len(seeds) == 2 and seeds[0] != seeds[1]
    assert read_jsonl(out) == []
    assert "drawn again with new seeds" in capsys.readouterr().err


def test_a_redrawn_item_is_finished_for_later_runs(tmp_path):
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", GOOD), ("Negative", BAD)])
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=redraw_reply) as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none") == 0
        assert augment(inp, out, srv, "-p", "flip_check=none", "--retry-failed") == 0
        written = sorted(row["Text"] for row in read_jsonl(out))
        assert len(written) == 2
        srv.requests.clear()
        assert augment(inp, out, srv, "-p", "flip_check=none") == 0  # the same command again: a resume
        assert srv.requests == []
        assert sorted(row["Text"] for row in read_jsonl(out)) == written  # the redrawn row is kept
        assert augment(inp, out, srv, "-p", "flip_check=none", "--retry-failed") == 0
        assert srv.requests == []  # nothing unreadable is left to draw again
    lines = read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")
    assert len(lines) == 3  # the first draw of each item and the redraw, no more


# -- samples are candidates: an unreadable one is dropped, the others written -------------------------------

def test_an_unreadable_sample_is_dropped_and_named_and_the_readable_ones_are_candidates(tmp_path):
    answers = iter(["Sure! Here is a more negative version of your text.",
                    "<revised>A terrible, tedious film.</revised>", "<revised>A dull, tedious film.</revised>"])

    def reply(body, prompt):
        return next(answers)

    inp = write_reviews(tmp_path / "in.tsv", [("Positive", GOOD)])
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=reply) as srv:
        code = augment(inp, out, srv, "-p", "flip_check=none", "-p", "samples=3", "-p", "temperature=0.7",
                       "-p", "parse_retries=0", "-p", "keep=3")
        assert srv.count() == 3
    assert code == 0
    rows = read_jsonl(out)
    assert sorted(r["Text"] for r in rows) == ["a dull , tedious film .", "a terrible , tedious film ."]
    dropped = rows[0]["meta"]["unreadable_samples"]
    assert len(dropped) == 1 and dropped[0]["sample"] in (0, 1, 2)
    assert dropped[0]["reason"].startswith("no readable answer in 1 attempt(s)") and "commentary" in dropped[0]["reason"]
    assert all(r["meta"]["unreadable_samples"] == dropped for r in rows)
    assert sorted(r["meta"]["sample"] for r in rows) == sorted({0, 1, 2} - {dropped[0]["sample"]})
    [line] = read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")
    assert line["status"] == "ok"


def test_with_keep_one_the_best_readable_sample_is_written(tmp_path):
    answers = iter(["I cannot do that.", "<revised>A terrible, tedious film.</revised>",
                    "<revised>A dull, tedious film.</revised>"])
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", GOOD)])
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=lambda body, prompt: next(answers)) as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none", "-p", "samples=3", "-p", "temperature=0.7",
                       "-p", "parse_retries=0") == 0
    [row] = read_jsonl(out)
    assert row["Text"] in ("a terrible , tedious film .", "a dull , tedious film .")
    assert row["meta"]["choice"]["rank"] == 1 and row["meta"]["choice"]["candidates"] == 2
    assert len(row["meta"]["unreadable_samples"]) == 1


# -- budgets from the source -----------------------------------------------------------------------------------

LONG = "the staff at this little place were friendly , the food came quickly and the coffee was great ."


def test_requests_never_ask_more_than_the_sources_cap_and_a_cut_off_answer_is_retried_within_it(tmp_path):
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", GOOD)])
    out = tmp_path / "out.jsonl"
    cap = BUDGET_FACTOR * budget(GOOD)
    reply = cut_at_max_tokens(Shaped("<revised>A terrible, tedious film.</revised>", reasoning="hmm " * 2000))
    with FakeLLM(default_reply=reply) as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none") == 0
        asked = [r.body.get("max_tokens") for r in srv.requests]
    assert asked == [budget(GOOD), 2 * budget(GOOD)]  # the budget, then twice it: both within the cap
    assert max(asked) <= cap < 8192
    [line] = read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")
    assert line["status"] == "no_counterfactual" and "cut off at max_tokens" in line["reason"]
    assert line["details"]["unreadable"] is True and line["details"]["finish_reasons"] == ["length", "length"]


def test_the_longer_budget_retry_stops_at_the_cap(tmp_path):
    """cot asks for its reasoning room on top of the budget; a cut-off answer is asked again with at most the
    cap, not twice what it had."""
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", LONG)])
    out = tmp_path / "out.jsonl"
    cap = BUDGET_FACTOR * budget(LONG)
    reply = cut_at_max_tokens("<think>" + "hmm " * 3000 + "</think><revised>It was awful.</revised>")
    with FakeLLM(default_reply=reply) as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none", method="cot") == 0
        asked = [r.body.get("max_tokens") for r in srv.requests]
    first = budget(LONG) + 256  # cot's room for its reasoning
    assert first < cap < 2 * first  # so the cap, not the doubling, bounds the retry
    assert asked == [first, cap]


def test_compare_generate_asks_within_the_cap(tmp_path):
    def reply(body, prompt):
        if "Classify the next" in prompt:
            return "negative"
        return "Analysis: fine.\n<revised>A terrible, tedious film.</revised>"

    inp = write_reviews(tmp_path / "in.tsv", [("Positive", GOOD)])
    with FakeLLM(default_reply=reply) as srv:
        assert augment(inp, tmp_path / "out.jsonl", srv, "-p", "flip_check=none", method="compare-generate") == 0
        asked = [r.body.get("max_tokens") for r in srv.requests]
    cap = BUDGET_FACTOR * budget(GOOD)
    assert asked and all(m is not None and m <= cap for m in asked), asked
    assert cap in asked  # the comparison's 512 tokens of room were cut to the cap


# -- the source's surface form ------------------------------------------------------------------------------------

def prose_reply(body, prompt):
    if "Classify the next" in prompt:  # compare-generate's judge
        return "negative"
    return "Analysis: fine.\n<revised>It's an awful, tedious film!</revised>"


@pytest.mark.parametrize("method", ["zero-shot", "few-shot", "compare-generate"])
def test_rows_are_written_in_the_sources_case_and_tokenization(tmp_path, method):
    source = "it 's a great , moving film !"
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", source)])
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply=prose_reply) as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none", method=method) == 0
    [row] = read_jsonl(out)
    assert row["Text"] == "it 's an awful , tedious film !"
    assert row["original_Text"] == source


def test_a_prose_source_gets_a_tokenized_answer_in_prose(tmp_path):
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", "It's a great, moving film!")])
    out = tmp_path / "out.jsonl"
    with FakeLLM(default_reply="<revised>it 's an awful , tedious film !</revised>") as srv:
        assert augment(inp, out, srv, "-p", "flip_check=none") == 0
    assert [row["Text"] for row in read_jsonl(out)] == ["It's an awful, tedious film!"]


# -- a near copy of the source fails the flip check --------------------------------------------------------------

def test_a_near_copy_of_the_source_is_not_written(tmp_path):
    source = "they also have lost sight of what good deli food is ."
    inp = write_reviews(tmp_path / "in.tsv", [("Negative", source), ("Positive", GOOD)])
    out = tmp_path / "out.jsonl"

    def reply(body, prompt):
        if "deli food" in prompt:
            return "<revised>They have lost sight of what good deli food is.</revised>"  # "also" dropped, no more
        return "<revised>A terrible, tedious film.</revised>"

    with FakeLLM(default_reply=reply) as srv:
        assert augment(inp, out, srv) == 0  # the default flip check
    assert [row["original_Text"] for row in read_jsonl(out)] == [GOOD]  # the real flip is written
    [line] = [x for x in read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl") if x["source_id"] == "1"]
    assert line["status"] == "no_counterfactual" and line["reason"] == "every candidate failed a filter: flip_check"
    [cand] = line["counterfactuals"]
    assert cand["Text"] == "they have lost sight of what good deli food is ."  # in its source's form
    assert cand["meta"]["filters"]["flip_check"] is False and cand["meta"]["passed"] is False
    assert cand["meta"]["filter_notes"]["flip_check"] == "a near copy of the source: only function words differ"


def test_an_item_over_its_time_limit_fails(tmp_path, capsys):
    inp = write_reviews(tmp_path / "in.tsv", [("Positive", GOOD)])
    with FakeLLM(latency=1.5, default_reply="<revised>a terrible , tedious film .</revised>") as srv:
        out = tmp_path / "slow.jsonl"
        assert augment(inp, out, srv, "-p", "flip_check=none", "-p", "item_time_limit=1") == 5  # failed, none written
        [line] = read_jsonl(tmp_path / "slow.jsonl.run" / "results.jsonl")
        assert line["status"] == "error" and "item_time_limit=1 s" in line["error"]
        out = tmp_path / "fast.jsonl"
        assert augment(inp, out, srv, "-p", "flip_check=none", "-p", "item_time_limit=30") == 0
    [row] = read_jsonl(out)
    assert row["Text"] == "a terrible , tedious film ." and "item_seconds" not in row["meta"]  # rows stay reproducible
