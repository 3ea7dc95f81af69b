"""Runs that stop early, items that keep failing, and two processes on one run directory: ``cfaug augment
--method zero-shot`` against the loopback test server (tests/llm/server.py)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cfaug.cli import main

REVIEWS = [("Positive", "A great, moving film."), ("Negative", "A dull and tired plot."),
           ("Positive", "I love this fine, warm story."), ("Negative", "Boring from start to end.")]
SWAPS = {"great": "awful", "moving": "tedious", "dull": "lively", "tired": "fresh", "love": "hate",
         "Boring": "Gripping", "fine": "poor", "warm": "cold"}


def flip_reply(body, prompt):
    text = re.search(r"Text:\n(.*?)\n\n", prompt, re.S).group(1)
    return "<revised>" + re.sub(r"\w+", lambda m: SWAPS.get(m.group(0), m.group(0)), text) + "</revised>"


@pytest.fixture(autouse=True)
def _env(isolated_llm_cache):
    return isolated_llm_cache


def write_reviews(path: Path, rows=REVIEWS) -> Path:
    path.write_text("Sentiment\tText\n" + "".join(f"{lab}\t{text}\n" for lab, text in rows), encoding="utf-8")
    return path


def augment(inp, out, base_url, *extra):
    return main(["augment", str(inp), "-o", str(out), "--method", "zero-shot", "--llm-base-url", base_url,
                 "--llm-model", "test-model", "--no-progress", "--max-retries", "1", "-p", "flip_check=none",
                 *extra])  # scripted answers: no classifier flip check


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------- stopped runs (8)


def test_an_unreachable_server_stops_with_exit_3_and_says_the_output_is_partial(tmp_path, fake_llm, capsys):
    inp = write_reviews(tmp_path / "reviews.tsv")
    out = tmp_path / "out.jsonl"
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    assert augment(inp, out, url) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(r"status +INCOMPLETE", err) and "4 of 4 items not done" in err and "rerun" in err
    assert out.exists() and read_jsonl(out) == []  # the partial output is written
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["complete"] is False and summary["stop_reason"].startswith("LLMUnavailable")
    assert summary["items_not_done"] == 4 and summary["items_failed"] == 0  # not failed: still to do
    manifest = json.loads((tmp_path / "out.jsonl.run" / "manifest.json").read_text())
    assert manifest["summary"]["complete"] is False
    with fake_llm.FakeLLM(default_reply=flip_reply, port=port) as srv:  # the server is back: resume
        assert augment(inp, out, url) == 0
        assert srv.count() == 4
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["complete"] is True and summary["stop_reason"] is None and len(read_jsonl(out)) == 4
    assert re.search(r"status +complete", capsys.readouterr().err)


# ----------------------------------------------------------------------------- a poisoned item (9)


@pytest.mark.parametrize("concurrency", ["1", "4"])
def test_an_item_the_server_always_fails_is_marked_failed_and_the_run_goes_on(tmp_path, fake_llm, concurrency):
    rows = [*REVIEWS[:3], ("Negative", "Boring from start to end."), ("Positive", "A great ending.")]
    inp = write_reviews(tmp_path / "reviews.tsv", rows)
    out = tmp_path / "out.jsonl"
    with fake_llm.FakeLLM(default_reply=flip_reply) as srv:
        poisoned = srv.add("Boring from start", flip_reply, faults=["500"] * 1000)
        assert augment(inp, out, srv.base_url, "--concurrency", concurrency) == 4  # finished, one item failed
        assert srv.count("Boring from start") == 2  # the first attempt and one retry
        lines = {line["source_id"]: line for line in read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")}
        assert lines["4"]["status"] == "error" and "HTTP 500" in lines["4"]["error"]
        assert all(lines[i]["status"] == "ok" for i in ("1", "2", "3", "5"))
        summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
        assert summary["items_failed"] == 1 and summary["complete"] is True and len(read_jsonl(out)) == 4
        asked = srv.count()
        assert augment(inp, out, srv.base_url) == 4  # a plain rerun does not ask it again: still failed
        assert srv.count() == asked
        poisoned.faults.clear()  # the server is fixed: --retry-failed runs that item again
        assert augment(inp, out, srv.base_url, "--retry-failed") == 0
        assert srv.count() == asked + 1
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["items_failed"] == 0 and len(read_jsonl(out)) == 5


def test_the_last_item_left_is_failed_when_the_server_answers_a_probe(tmp_path, fake_llm):
    # a rerun with only the poisoned item to do: no other item vouches for the server, a probe does
    inp = write_reviews(tmp_path / "reviews.tsv", [("Negative", "Boring from start to end.")])
    out = tmp_path / "out.jsonl"
    with fake_llm.FakeLLM(default_reply=flip_reply) as srv:
        srv.add("Boring from start", flip_reply, faults=["500"] * 1000)
        srv.add("Reply with the word OK", lambda body, prompt: "OK")
        assert augment(inp, out, srv.base_url) == 5  # its only item failed: nothing written
        assert srv.count("Reply with the word OK") == 1
    line = read_jsonl(tmp_path / "out.jsonl.run" / "results.jsonl")[0]
    assert line["status"] == "error" and "test request" in json.dumps(line)
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["items_failed"] == 1 and summary["complete"] is True


def test_the_last_item_left_stops_the_run_when_the_probe_fails_too(tmp_path, fake_llm):
    inp = write_reviews(tmp_path / "reviews.tsv", [("Negative", "Boring from start to end.")])
    with fake_llm.FakeLLM(default_reply=flip_reply) as srv:
        srv.fail_next(*["500"] * 1000)  # every request, the probe included
        assert augment(inp, tmp_path / "out.jsonl", srv.base_url) == 3
        assert srv.count("Reply with the word OK") >= 1
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["complete"] is False and summary["items_failed"] == 0 and summary["items_not_done"] == 1


def test_a_server_failing_every_request_stops_the_run_instead_of_failing_every_item(tmp_path, fake_llm):
    rows = [("Positive", f"Review {i}: a great film.") for i in range(12)]
    inp = write_reviews(tmp_path / "reviews.tsv", rows)
    with fake_llm.FakeLLM(default_reply=flip_reply) as srv:
        srv.add("Review", flip_reply, faults=["500"] * 1000)
        assert augment(inp, tmp_path / "out.jsonl", srv.base_url, "--concurrency", "2") == 3
    summary = json.loads((tmp_path / "out.jsonl.run" / "summary.json").read_text())
    assert summary["complete"] is False and summary["items_failed"] == 0
    assert summary["stop_reason"].startswith("LLMUnavailable") and summary["items_not_done"] == 12


# ------------------------------------------------------------------- two processes, one run dir (3)


def test_a_second_process_on_a_busy_run_directory_is_refused(tmp_path, fake_llm):
    rows = [("Positive", f"Item {i:02d} is a great film.") for i in range(6)]
    inp = write_reviews(tmp_path / "reviews.tsv", rows)
    out, run_dir = tmp_path / "out.jsonl", tmp_path / "out.jsonl.run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    gate = threading.Event()

    def held_reply(body, prompt):  # the first run's first answer waits until the others were turned away
        gate.wait(120)
        return flip_reply(body, prompt)

    with fake_llm.FakeLLM(default_reply=held_reply) as srv:
        cmd = [sys.executable, "-m", "cfaug", "augment", str(inp), "-o", str(out), "--method", "zero-shot",
               "--llm-base-url", srv.base_url, "--llm-model", "test-model", "--concurrency", "1", "--no-progress",
               "-p", "flip_check=none"]  # scripted answers: no classifier flip check
        first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not (run_dir / "manifest.json").exists():  # written once the run holds its directory
            assert first.poll() is None, first.stderr.read().decode()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        same = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        other = subprocess.run([*cmd, "--seed", "1"], env=env, capture_output=True, text=True, timeout=120)
        gate.set()
        assert first.wait(120) == 0, first.stderr.read().decode()
    for second in (same, other):
        assert second.returncode == 2, second.stderr
        assert f"in use by another cfaug run (pid {first.pid} on {socket.gethostname()}" in second.stderr
        assert "Traceback" not in second.stderr
    keys = [line["key"] for line in read_jsonl(run_dir / "results.jsonl")]
    assert len(keys) == len(set(keys)) == 6  # every item once
    assert json.loads((run_dir / "config.json").read_text())["seed"] == 0
    assert srv.count() == 6 and len(read_jsonl(out)) == 6
    assert not (run_dir / "lock").exists()
