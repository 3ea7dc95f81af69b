"""A run killed with SIGKILL and started again with the same command finishes the job: rows written before
the kill stay as they were, nothing is done twice, and the output equals an uninterrupted run, under each
engine (in-process, a pool of two worker processes, Ray)."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from contextlib import redirect_stderr, redirect_stdout

import pytest

from cfaug.cli import main

ROWS = 80


@pytest.fixture(scope="module")
def big_input(tmp_path_factory, sentiment_tsv):
    """The 40 fixture sentences twice over (a neutral sentence appended), ids kept unique."""
    with open(sentiment_tsv, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    f = tmp_path_factory.mktemp("resume") / "big.tsv"
    with open(f, "w", encoding="utf-8") as fh:
        fh.write("id\tSentiment\tText\n")
        for k, tail in enumerate(["", " We saw it on Sunday."]):
            for r in rows:
                fh.write(f"{r['id']}-{k}\t{r['Sentiment']}\t{r['Text']}{tail}\n")
    return f


@pytest.fixture(scope="module")
def uninterrupted(big_input, tmp_path_factory):
    """The output of an uninterrupted in-process run with the same seed (the same for every engine)."""
    d = tmp_path_factory.mktemp("clean")
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert main(command(big_input, d / "clean.jsonl", d / "clean-run")) == 0
    return (d / "clean.jsonl").read_bytes()


def command(src, out, run_dir, engine=()):
    # what is tested here is the run's resumption, not what the method does: the similarity filter stays off
    # (its default), so that none of the runs loads a sentence encoder, and C reads the 80 rows alone (no
    # shipped background sample of 20,000 texts), so that it trains in a moment and each run loads it at once
    return ["augment", str(src), "-o", str(out), "--run-dir", str(run_dir), "--seed", "3", "--no-progress",
            "-p", "classifier_background=none", *engine]


ENGINES = [
    pytest.param(("--workers", "1"), id="in-process"),
    pytest.param(("--workers", "2", "--batch-size", "4"), id="local-2-workers"),
    pytest.param(("--engine", "ray", "--workers", "2", "--batch-size", "4"), id="ray", marks=pytest.mark.ray),
]


def complete_lines(path):
    data = path.read_bytes() if path.exists() else b""
    return data[: data.rfind(b"\n") + 1].splitlines(keepends=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_sigkill_then_rerun(tmp_path, big_input, uninterrupted, engine):
    if "ray" in engine:
        pytest.importorskip("ray")
    run_dir, out = tmp_path / "run", tmp_path / "out.jsonl"
    results = run_dir / "results.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "cfaug", *command(big_input, out, run_dir, engine)]

    with open(tmp_path / "first.log", "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 600  # a safety net only; the test waits for file contents
            while not complete_lines(results):
                assert proc.poll() is None, (tmp_path / "first.log").read_text()
                assert time.monotonic() < deadline, "no result appeared"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = complete_lines(results)
    assert 0 < len(before) < ROWS, "the run finished before it could be killed"
    keys_before = [json.loads(line)["key"] for line in before]
    assert len(set(keys_before)) == len(keys_before)
    assert not out.exists()  # the output is written only at the end

    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
    assert again.returncode == 0, again.stderr
    after = results.read_bytes().splitlines(keepends=True)
    keys = [json.loads(line)["key"] for line in after]
    assert len(keys) == len(set(keys)) == ROWS  # every item exactly once
    assert after[: len(before)] == before  # the first run's rows are untouched
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["items_resumed"] == len(before) and summary["items"] == ROWS

    # an uninterrupted in-process run with the same seed gives the same output, byte for byte
    assert out.read_bytes() == uninterrupted
    assert len(out.read_bytes().splitlines()) > ROWS // 2
