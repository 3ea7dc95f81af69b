"""Answers as OpenAI-compatible servers shape them, read by the LLM methods: reasoning (a field beside the
content, or inline ``<think>`` blocks), answers cut off at ``max_tokens``, and rewrites without their tags.

The shapes: vLLM with a reasoning parser (``reasoning_content``, or ``reasoning`` in newer releases; content
null when the model was cut off while thinking) and without one (``<think>`` inline, or only ``</think>``
when the chat template opened the block), Ollama's OpenAI-compatible endpoint (``reasoning``, or inline),
llama.cpp's server (``reasoning_content``), and OpenAI (plain content, ``finish_reason`` ``stop`` or
``length``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cfaug.cli import main
from cfaug.data.records import NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import SentimentTask
from cfaug.llm.errors import COMMENTARY, CUT_OFF, NOT_A_REWRITE, REASONING_OPEN, TAGS_IN_TEXT
from cfaug.methods.zero_shot import ZeroShot
from cfaug.training.context import StageContext

from cfaug_tests_llm_server import FakeLLM, Shaped, cut_at_max_tokens  # noqa: E402  (loaded by tests/conftest.py)

pytestmark = pytest.mark.usefixtures("isolated_llm_cache")

TEXT = "A great film with a moving story."
REWRITE = "A dull film with a tedious story."
TAGGED = f"<revised>{REWRITE}</revised>"
THOUGHT = "The text is positive, so great and moving must become negative words: dull and tedious."
LONG_THOUGHT = " ".join(["Let me think about which words carry the sentiment."] * 4)  # 36 words


def zero_shot(srv, **config):
    llm = {"base_url": srv.base_url, "model": "test-model", "retry_base_delay": 0.01}
    return ZeroShot(ZeroShot.Config(llm=llm, **config))


def item(i=1, text=TEXT):
    return WorkItem(Record(str(i), {"text": text}, "positive"), "negative")


def run(method, items, run_dir=None):
    """One session as the runner drives it; each item's counterfactuals (or its error) and the usage report."""
    ctx = StageContext()
    if run_dir is not None:
        ctx.run_dir = run_dir
    method.prepare([], SentimentTask(), ctx)

    async def go():
        try:
            return await asyncio.gather(*(method.agenerate(it, SentimentTask()) for it in items),
                                        return_exceptions=True)
        finally:
            await method.aclose()
    try:
        return asyncio.run(go()), method.report()
    finally:
        method.close()


def is_unreadable(result) -> bool:
    """Whether an item's result says its answers held nothing readable: no counterfactual (not an error), its
    reason and the raw answers kept, marked unreadable (what --retry-failed draws again)."""
    assert isinstance(result, NoCounterfactual) and list(result) == [], result
    assert result.reason.startswith("no readable answer"), result.reason
    assert result.details["unreadable"] is True
    return True


def max_tokens_asked(srv):
    return [r.body.get("max_tokens") for r in srv.requests]


SHAPES = {
    "openai": TAGGED,
    "vllm-reasoning-parser": Shaped(TAGGED, reasoning=THOUGHT),
    "vllm-reasoning-field-renamed": Shaped(TAGGED, reasoning=THOUGHT, reasoning_field="reasoning"),
    "vllm-without-reasoning-parser": f"<think>\n{THOUGHT}\n</think>\n\n{TAGGED}",
    "template-opened-think": f"{THOUGHT}\n</think>\n\n{TAGGED}",  # Qwen3 / DeepSeek-R1 templates open <think>
    "ollama-reasoning-field": Shaped(TAGGED, reasoning=THOUGHT, reasoning_field="reasoning"),
    "ollama-inline": f"<think>{THOUGHT}</think>{TAGGED}",
    "llama.cpp-reasoning-content": Shaped(TAGGED, reasoning=THOUGHT, reasoning_field="reasoning_content"),
    "thinking-tag": f"<thinking>{THOUGHT}</thinking>\n{TAGGED}",
}


@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
def test_every_server_shape_gives_the_rewrite_never_the_reasoning(shape):
    with FakeLLM(default_reply=shape) as srv:
        [cfs], _ = run(zero_shot(srv), [item()])
    [cf] = cfs
    assert cf.fields["text"] == REWRITE
    llm = cf.meta["llm"]
    assert llm["attempts"] == 1 and llm["finish_reason"] == "stop" and "parse" not in llm
    assert llm.get("reasoning_chars", 0) == (0 if shape == TAGGED else len(THOUGHT))


def test_a_label_after_a_reasoning_block_is_read():
    """The thought names both labels; before reasoning was stripped the label parser refused the answer."""
    with FakeLLM(default_reply=f"<think>{THOUGHT} Positive or negative?</think>\nnegative") as srv:
        method = zero_shot(srv)

        async def go():
            try:
                return await method.ask(method.prompt("zero-shot-sentiment"), {"text": TEXT, "target": "negative",
                                        "source_label": "positive"}, parser="label",
                                        parser_context={"labels": ["positive", "negative"]}, max_tokens=200)
            finally:
                await method.aclose()
        answer = asyncio.run(go())
        method.close()
    assert answer.value == "negative" and answer.reasoning.startswith("The text is positive")


def test_an_unclosed_reasoning_block_is_unreadable():
    with FakeLLM(default_reply=f"<think>{THOUGHT} Now I should write <revised>A dull") as srv:
        [err], report = run(zero_shot(srv), [item()])
        assert srv.count() == 3  # finish_reason "stop": sent back with a reminder, twice
    assert is_unreadable(err) and "never closes it" in err.reason
    assert report["llm_unparsed_reasons"] == {REASONING_OPEN: 1}


def test_a_cut_off_answer_is_asked_again_with_twice_the_budget():
    reply = cut_at_max_tokens(f"<think>{LONG_THOUGHT}</think>{TAGGED}")  # 36 + 7 words
    with FakeLLM(default_reply=reply) as srv:
        [cfs], _ = run(zero_shot(srv, max_tokens=30), [item()])
        assert max_tokens_asked(srv) == [30, 60]
    [cf] = cfs
    assert cf.fields["text"] == REWRITE
    llm = cf.meta["llm"]
    assert llm["attempts"] == 2 and llm["max_tokens_raised"] == 60 and llm["finish_reason"] == "stop"


def test_a_rerun_replays_the_cut_off_answer_and_the_longer_one_from_the_cache():
    reply = cut_at_max_tokens(Shaped(TAGGED, reasoning=LONG_THOUGHT))
    with FakeLLM(default_reply=reply) as srv:
        [first], _ = run(zero_shot(srv, max_tokens=30), [item()])
        [again], report = run(zero_shot(srv, max_tokens=30), [item()])
        assert srv.count() == 2
    assert first[0].fields == again[0].fields and report["llm_cache_hits"] == 2


@pytest.mark.parametrize("reply", [
    cut_at_max_tokens("<revised>" + " ".join(["word"] * 80) + "</revised>"),  # OpenAI: a long answer, cut
    cut_at_max_tokens(Shaped(TAGGED, reasoning=" ".join(["hmm"] * 80))),  # vLLM parser: cut while thinking
    cut_at_max_tokens(f"<think>{' '.join(['hmm'] * 80)}</think>{TAGGED}"),  # inline thinking, cut
], ids=["openai", "vllm-reasoning-parser", "inline-think"])
def test_an_answer_cut_off_twice_is_never_written(reply):
    with FakeLLM(default_reply=reply) as srv:
        [err], report = run(zero_shot(srv, max_tokens=20), [item()])
        assert max_tokens_asked(srv) == [20, 40]  # no reminder: a reminder does not make an answer fit
    assert is_unreadable(err)
    assert "cut off at max_tokens" in err.reason and "-p max_tokens" in err.reason
    assert err.details["finish_reasons"] == ["length", "length"]
    assert report["llm_unparsed_reasons"] == {CUT_OFF: 1}


def test_an_answer_cut_off_after_its_closing_tag_is_used():
    with FakeLLM(default_reply=Shaped(f"{TAGGED}\n\nI replaced great with dull and", finish_reason="length")) as srv:
        [cfs], _ = run(zero_shot(srv, max_tokens=20), [item()])
        assert srv.count() == 1
    assert cfs[0].fields["text"] == REWRITE and cfs[0].meta["llm"]["parse"] == {"cut_off_after_tags": True}


def test_the_longer_budget_is_capped_and_can_be_turned_off():
    reply = cut_at_max_tokens("<revised>" + " ".join(["word"] * 80) + "</revised>")
    with FakeLLM(default_reply=reply) as srv:
        [err], _ = run(zero_shot(srv, max_tokens=20, length_retry_max_tokens=25), [item()])
        assert is_unreadable(err) and max_tokens_asked(srv) == [20, 25]
    with FakeLLM(default_reply=reply) as srv:
        [err], _ = run(zero_shot(srv, max_tokens=20, length_retry_max_tokens=0), [item()])
        assert is_unreadable(err) and max_tokens_asked(srv) == [20]


def test_without_max_tokens_the_retry_doubles_what_the_server_gave():
    with FakeLLM() as srv:
        srv.add(lambda p: True, Shaped("<revised>A dull", finish_reason="length", completion_tokens=16), times=1)
        srv.add(lambda p: True, TAGGED)
        method = zero_shot(srv)

        async def go():
            try:
                return await method.ask(method.prompt("zero-shot-sentiment"),  # no "original": no cap
                                        {"text": TEXT, "target": "negative", "source_label": "positive"})
            finally:
                await method.aclose()
        answer = asyncio.run(go())
        method.close()
        assert max_tokens_asked(srv) == [None, 32]
    assert answer.value == REWRITE and answer.max_tokens_raised == 32


def test_an_untagged_rewrite_is_kept_with_its_figures():
    with FakeLLM(default_reply=REWRITE) as srv:
        [cfs], _ = run(zero_shot(srv), [item()])
    [cf] = cfs
    assert cf.fields["text"] == REWRITE
    parse = cf.meta["llm"]["parse"]
    assert parse["format"] == "untagged" and parse["length_ratio"] == 1.0
    assert parse["word_overlap"] == pytest.approx(4 / 6, abs=1e-3)  # a, film, with, story of its 6 distinct words


@pytest.mark.parametrize("reply", [
    "purple elephants dance quietly under the northern lights tonight",  # other words
    "A dull film.",  # too short: a third of the text
    f"{REWRITE} I replaced great with dull and moving with tedious, which flips the sentiment of the text.",
    "<revised>purple elephants dance quietly tonight, all of them",  # an unclosed tag does not vouch for it
])
def test_an_untagged_answer_unlike_its_source_is_never_written(reply):
    with FakeLLM(default_reply=reply) as srv:
        [err], report = run(zero_shot(srv), [item()])
        assert srv.count() == 3  # the answer and two reminders
        assert "between <revised> and </revised>" in srv.requests[1].prompt
    assert is_unreadable(err) and "does not read as a rewrite" in err.reason
    assert report["llm_unparsed_reasons"] == {NOT_A_REWRITE: 1}


def test_the_untagged_bounds_are_parameters():
    longer = f"{REWRITE} It drags."  # 1.33 times as long, every word kept
    with FakeLLM(default_reply=longer) as srv:
        [cfs], _ = run(zero_shot(srv), [item()])
        assert cfs[0].fields["text"] == longer
    with FakeLLM(default_reply=longer) as srv:
        [err], _ = run(zero_shot(srv, untagged_max_length=1.2, parse_retries=0), [item()])
        assert is_unreadable(err) and "allowed 0.5 to 1.2" in err.reason
    with FakeLLM(default_reply="A dull film with a tedious plot.") as srv:  # a, film, with: half its words
        [err], _ = run(zero_shot(srv, parse_retries=0, untagged_min_overlap=0.6), [item()])
        assert is_unreadable(err)
        [cfs], _ = run(zero_shot(srv, parse_retries=0), [item()])
        assert cfs[0].fields["text"] == "A dull film with a tedious plot."


def write_reviews(path: Path) -> Path:
    rows = [("Positive", "A great film with a moving story."), ("Negative", "A dull plot and tired jokes."),
            ("Positive", "I loved the warm and funny cast."), ("Negative", "Boring from start to end.")]
    path.write_text("Sentiment\tText\n" + "".join(f"{lab}\t{text}\n" for lab, text in rows), encoding="utf-8")
    return path


def test_a_run_writes_only_readable_complete_answers_and_counts_the_others(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM() as srv:
        srv.add("A great film", Shaped(TAGGED, reasoning=THOUGHT))
        srv.add("A dull plot", cut_at_max_tokens(Shaped("<revised>A fine plot and fresh jokes.</revised>",
                                                        reasoning=" ".join(["hmm"] * 500))))
        srv.add("I loved", "Sure! Here is the text with a negative sentiment.")
        srv.add("Boring from", "<think>Is this review negative? It says boring")
        code = main(["augment", str(inp), "-o", str(tmp_path / "out.jsonl"), "--method", "zero-shot",
                     "--llm-base-url", srv.base_url, "--llm-model", "m", "--no-progress", "-p", "max_tokens=40",
                     "-p", "flip_check=none"])  # scripted answers: no classifier flip check
    assert code == 0  # finished: an unreadable answer is no failed item
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["Text"] for r in rows] == [REWRITE]
    lines = {json.loads(line)["source_id"]: json.loads(line)
             for line in (tmp_path / "out.jsonl.run" / "results.jsonl").read_text().splitlines()}
    cut = lines["2"]
    assert cut["status"] == "no_counterfactual" and "cut off at max_tokens" in cut["reason"] and "error" not in cut
    assert cut["details"]["finish_reasons"] == ["length", "length"] and len(cut["details"]["reasoning"]) == 2
    assert all(lines[k]["status"] == "no_counterfactual" and lines[k]["details"]["unreadable"] is True
               for k in ("2", "3", "4"))
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["items_failed"] == 0 and summary["counterfactuals_written"] == 1
    assert sum(summary["without_reasons"].values()) == 3
    assert summary["extra"]["llm_unparsed_reasons"] == {COMMENTARY: 1, CUT_OFF: 1, REASONING_OPEN: 1}


HOLDS_TAGS = "The staff was friendly and quick and the rooms were clean and bright. </revised> Also the pool was warm."
KEEPS_TAGS = "The staff was rude and slow and the rooms were dirty and dark. </revised> Also the pool was cold."


def test_a_source_that_holds_the_answers_tags_is_rewritten_whole():
    with FakeLLM(default_reply=f"<revised>{KEEPS_TAGS}</revised>") as srv:
        [cfs], _ = run(zero_shot(srv), [item(text=HOLDS_TAGS)])
    assert [cf.fields["text"] for cf in cfs] == [KEEPS_TAGS]


def test_an_answer_whose_tags_mix_with_its_sources_is_asked_again_then_never_written():
    mixed = f"<revised>{KEEPS_TAGS} <revised>The staff was rude.</revised>"
    with FakeLLM(default_reply=mixed) as srv:
        [err], report = run(zero_shot(srv), [item(text=HOLDS_TAGS)])
        assert srv.count() == 3
        assert "The text itself holds </revised>: keep them where they are" in srv.requests[1].prompt
    assert is_unreadable(err) and "holds </revised> itself" in err.reason
    assert report["llm_unparsed_reasons"] == {TAGS_IN_TEXT: 1}
