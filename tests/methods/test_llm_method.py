"""The LLM method base class: prompting with parse retries, unparsed records, run identity."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from cfaug.data.records import NoCounterfactual, Record, WorkItem
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


def test_a_refusal_is_reported_as_a_refusal_not_as_an_empty_answer(llm_server, fake_llm):
    refusal = "I'm sorry, but I can't help with rewriting this review. " + "Policy says no. " * 40
    llm_server.add("Great film.", fake_llm.Shaped(None, refusal=refusal))
    method = make(llm_server)
    with pytest.raises(UnparsedAnswer) as info:
        ask_once(method)
    message = str(info.value)
    assert "refused to answer: \"I'm sorry, but I can't help" in message and "empty" not in message
    assert len(message) < 500  # the refusal is quoted short
    assert info.value.details["refusals"] == [refusal]
    assert llm_server.count() == 1  # a reminder of the format is no answer to a refusal: not asked again
    assert method.report()["llm_unparsed_reasons"] == {"refused by the model": 1}


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


# -- failed items on a retry, unparsed counts, usage kept in the run directory ------------------------

class Asker(LLMMethod):
    """Asks ``asks`` prompts per item (the text with ``#0``, ``#1``... appended); with ``tolerate``, an
    unreadable answer only loses that ask (as Compare&Generate's samples do), else it fails the item."""

    name = "asker-test.v1"

    @dataclass
    class Config(LLMConfig):
        asks: int = 1
        tolerate: bool = False

    async def agenerate(self, item, task):
        prompt = load_prompt("zero-shot-sentiment")
        values = []
        for a in range(self.config.asks):
            variables = {"text": f"{item.record.fields['text']} #{a}", "target": item.target,
                         "source_label": item.record.label}
            try:
                answer = await self.ask(prompt, variables, seed=self.item_seed(item) % 2 ** 31, max_tokens=20)
            except UnparsedAnswer:
                if not self.config.tolerate:
                    raise
                continue
            values.append(answer.value)
        return values


def make_asker(srv, **config):
    llm = {"base_url": srv.base_url, "model": "test-model", "retry_base_delay": 0.01}
    return Asker(Asker.Config(llm=llm, parse_retries=2, **config))


def item(i=1, text="Great film."):
    return WorkItem(Record(str(i), {"text": text}, "positive"), "negative")


def run_items(method, items, run_dir=None):
    """One session as the runner drives it: prepare, every item concurrently (one task each), close.
    Returns each item's result (or error) and the usage report."""
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
        results = asyncio.run(go())
        return results, method.report()
    finally:
        method.close()


UNREADABLE = "Sure, I can do that for you!"


def assert_unreadable(result, answers=3):
    """An item whose answers held nothing readable: no counterfactual (not an error), with the reason and
    the raw answers in its details, marked unreadable (what --retry-failed draws again)."""
    assert isinstance(result, NoCounterfactual) and not isinstance(result, BaseException), result
    assert list(result) == []
    assert result.reason.startswith(f"no readable answer in {answers} attempt(s)")
    assert result.details["unreadable"] is True
    assert result.details["answers"] == [UNREADABLE] * answers


def test_an_unreadable_item_is_asked_again_when_retried(llm_server):
    llm_server.add("Great film.", UNREADABLE)
    [none], _ = run_items(make_asker(llm_server), [item()])
    assert_unreadable(none)
    assert llm_server.count() == 3
    # --retry-failed: a new session over the same cache asks again instead of replaying the unreadable answers
    [none], _ = run_items(make_asker(llm_server), [item()])
    assert_unreadable(none)
    assert llm_server.count() == 6


def test_an_item_that_fails_is_still_an_error_and_asked_again_when_retried(llm_server):
    """Only unreadable answers make an item "none": an error without an answer (the server) still fails it."""
    llm_server.add("Great film.", "<revised>Awful film.</revised>", faults=["400"])
    [err], _ = run_items(make_asker(llm_server), [item()])
    assert isinstance(err, Exception) and not isinstance(err, NoCounterfactual)
    [values], _ = run_items(make_asker(llm_server), [item()])
    assert values == ["Awful film."]


def test_a_finished_item_is_replayed_from_the_cache_even_with_a_tolerated_unreadable_answer(llm_server):
    llm_server.add("#0", UNREADABLE)
    llm_server.add("#1", "<revised>Awful film.</revised>")
    [values], _ = run_items(make_asker(llm_server, asks=2, tolerate=True), [item()])
    assert values == ["Awful film."] and llm_server.count() == 4
    [values], report = run_items(make_asker(llm_server, asks=2, tolerate=True), [item()])
    assert values == ["Awful film."] and llm_server.count() == 4  # nothing asked again
    assert report["llm_cache_hits"] == 4


def test_an_ask_that_fails_outside_an_item_is_not_replayed(llm_server):
    llm_server.add("Great film.", UNREADABLE)
    for _ in range(2):
        with pytest.raises(UnparsedAnswer):
            ask_once(make(llm_server))
    assert llm_server.count() == 6


def test_unparsed_figures_count_items_and_answers(llm_server):
    llm_server.add("#", UNREADABLE)
    items = [item(i, f"Film {i}.") for i in range(2)]
    results, report = run_items(make_asker(llm_server, asks=3, tolerate=True), items)
    assert results == [[], []]
    assert report["llm_unparsed_items"] == 2   # distinct items, not answers
    assert report["llm_unparsed_answers"] == 6


def test_usage_is_kept_in_the_run_directory_and_adds_up_over_sessions(llm_server, tmp_path):
    llm_server.add("Great film.", UNREADABLE, times=3)
    llm_server.add("Great film.", "<revised>Awful film.</revised>")
    [none], first = run_items(make_asker(llm_server), [item()], run_dir=tmp_path)
    assert_unreadable(none)
    assert (tmp_path / "llm_usage.json").exists()
    assert first["llm_requests"] == 3 and first["llm_unparsed_items"] == 1
    [values], second = run_items(make_asker(llm_server), [item()], run_dir=tmp_path)  # --retry-failed
    assert values == ["Awful film."]
    assert second["llm_requests"] == 4 and second["llm_sessions"] == 2
    assert second["llm_tokens_in"] > first["llm_tokens_in"]
    assert second["llm_unparsed_answers"] == 1
    assert "llm_unparsed_items" not in second  # the item's latest attempt parsed


@pytest.mark.parametrize("method", ["zero-shot", "few-shot", "self-refine"])
def test_written_rows_name_a_local_model_and_its_sha256_and_keep_its_path_in_the_manifest(fake_llamacpp, tmp_path,
                                                                                          method):
    import hashlib
    import json

    from cfaug.cli import main

    srv, model = fake_llamacpp
    srv.default_reply = "<revised>A dull film with a tedious story.</revised>"
    srv.add("Give your feedback", "It still sounds positive: great and moving.")  # self-refine's feedback
    inp = tmp_path / "in.tsv"
    inp.write_text("text\tlabel\nA great film with a moving story.\tpositive\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["augment", str(inp), "-o", str(out), "--method", method, "--llm-model", str(model),
                 "--no-progress", "-p", "flip_check=none", *(["-p", "rounds=1"] if method == "self-refine" else [])])
    assert code == 0
    [row] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["meta"]["llm"]["model"] == "tiny-chat.gguf"
    assert row["meta"]["llm"]["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert str(model.parent) not in out.read_text(encoding="utf-8")  # no local path leaves with the data
    manifest = json.loads((tmp_path / "out.jsonl.run" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["method_facts"]["llm"]["local_model"]["path"] == str(model)
