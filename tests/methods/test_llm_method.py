"""The LLM method base class: prompting with parse retries, unparsed records, run identity."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import NLITask, SentimentTask
from cfaug.llm import UnparsedAnswer, load_prompt
from cfaug.methods.llm_method import LLMConfig, LLMMethod, task_variables
from cfaug.training.context import StageContext

pytestmark = pytest.mark.usefixtures("isolated_llm_cache")


class Echo(LLMMethod):
    name = "echo-test.v1"

    @dataclass
    class Config(LLMConfig):
        pass


def make(srv, **llm):
    settings = {"base_url": srv.base_url, "model": "test-model", "retry_base_delay": 0.01, **llm}
    return Echo(Echo.Config(llm=settings, parse_retries=2))


def ask_once(method, text="Great film."):
    prompt = load_prompt("zero-shot-sentiment")

    async def go():
        try:
            return await method.ask(prompt, {"text": text, "target": "negative", "source_label": "positive"},
                                    seed=3, max_tokens=20)
        finally:
            await method.aclose()
    try:
        return asyncio.run(go())
    finally:
        method.close()


def test_unreadable_answer_is_sent_back_with_a_reminder(llm_server):
    llm_server.add("could not find the revised text", "<revised>Awful film.</revised>")
    llm_server.add("Great film.", "Sure, I can do that for you!")
    answer = ask_once(make(llm_server))
    assert answer.value == "Awful film."
    assert len(answer.completions) == 2 and answer.provenance()["attempts"] == 2
    retry = llm_server.requests[1].body["messages"]
    assert retry[-2] == {"role": "assistant", "content": "Sure, I can do that for you!"}
    assert "<revised>" in retry[-1]["content"]


def test_never_parsed_answers_are_kept_in_the_error(llm_server):
    llm_server.add("Great film.", "Sure, I can do that for you!")
    method = make(llm_server)
    with pytest.raises(UnparsedAnswer, match="3 attempt") as info:
        ask_once(method)
    assert info.value.details["answers"] == ["Sure, I can do that for you!"] * 3
    assert len(info.value.details["reasons"]) == 3
    assert method.report()["llm_unparsed_items"] == 1
    assert llm_server.count() == 3


def test_identity_params_leave_out_operational_settings(llm_server, tmp_path):
    a = make(llm_server, cache_dir=str(tmp_path / "x"), rpm=600)
    b = make(llm_server)
    try:
        a.prepare([], SentimentTask(), StageContext(concurrency=4))  # the run's --concurrency
        b.prepare([], SentimentTask(), StageContext(concurrency=64))
        assert a.identity_params() == b.identity_params()
        assert a.identity_params()["llm"]["model"] == "test-model"
        assert a.settings.concurrency == 4 and b.settings.concurrency == 64
    finally:
        a.close()
        b.close()


def test_prepare_builds_the_client_and_records_settings(llm_server):
    method = make(llm_server)
    facts = method.prepare([], SentimentTask(), StageContext())
    assert facts["llm"]["backend"] == "openai" and facts["llm"]["model"] == "test-model"
    assert facts["llm"]["cache"].endswith("requests.sqlite")
    method.close()


def test_task_variables_for_nli():
    rec = Record("7", {"premise": "A dog runs.", "hypothesis": "An animal moves."}, "entailment")
    v = task_variables(WorkItem(rec, "contradiction"), NLITask(edit_side="hypothesis"))
    assert (v["edit_role"], v["original"], v["source_label"], v["target"]) == (
        "hypothesis", "An animal moves.", "entailment", "contradiction")
    assert v["premise"] == "A dog runs." and v["labels"] == ["entailment", "neutral", "contradiction"]
