"""``cfaug demo``: the packaged sample exists, edits are shown in their context, the examples are spread
over the method's confidence, the report is written and the next steps name only existing commands."""

from __future__ import annotations

import csv
from pathlib import Path

from cfaug.cli.demo import (describe_example, marked_excerpts, next_steps, pick_examples, plural,
                            registered_commands, sample_path)


def test_packaged_sample_is_balanced_and_has_ids():
    with open(sample_path(), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len(rows) == 60 and len({r["id"] for r in rows}) == 60
    assert sorted({r["Sentiment"] for r in rows}) == ["Negative", "Positive"]
    assert sum(r["Sentiment"] == "Positive" for r in rows) == 30


def test_marked_excerpts_show_each_edit_with_its_context():
    text = "The music is great, you get a real feel. Cash is good too and I love it."
    a, b = text.index("great"), text.index("good")
    edits = [{"start": b, "end": b + 4, "old": "good", "new": ""},
             {"start": a, "end": a + 5, "old": "great", "new": "awful"}]
    assert marked_excerpts(text, edits, context=20) == (
        "The music is [great -> awful] ...  real feel. Cash is [good -> (removed)] too and I love it. ...")
    assert marked_excerpts(text, edits[:1], context=10) == "... . Cash is [good -> (removed)] too and I ..."


def test_demo_runs_with_no_network_and_empty_caches(tmp_path):
    """A fresh machine: empty home, model store and Hugging Face cache; every socket connection refused."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import socket, sys\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network access attempted')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from cfaug.cli import main\n"
        f"sys.exit(main(['demo', '--out', {str(tmp_path / 'demo')!r}]))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "CFAUG_", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), HF_HOME=str(tmp_path / "hf"), OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["counterfactuals"] > 0
    # the report lies in the demo folder, and the output says where and what to try next
    report = tmp_path / "demo" / "report.html"
    assert summary["report"] == str(report) and report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out = proc.stdout
    assert f"report: {report}" in out
    steps = out[out.index("\nnext:\n"):]
    assert f"cfaug evaluate {tmp_path / 'demo' / 'counterfactuals.jsonl'}" in steps
    # the input is copied beside the output, for the next commands
    assert (tmp_path / "demo" / "reviews.tsv").read_bytes() == sample_path().read_bytes()
    assert f"cfaug augment {tmp_path / 'demo' / 'reviews.tsv'} -o cf.jsonl --seed 0 --limit 20" in steps
    # the run directory is named as cfaug augment names it: OUTPUT.run, so no command needs --run-dir
    run_dir = tmp_path / "demo" / "counterfactuals.jsonl.run"
    assert summary["run_dir"] == str(run_dir) and (run_dir / "config.json").exists()
    assert f"cfaug report {run_dir}" in steps and "--run-dir" not in steps
    assert ("cfaug review serve" in steps) == (("review", "serve") in registered_commands())
    # examples: three typical ones, at the quartiles of the confidence of the n rows written (precision first:
    # some of the 60 reviews get none; with n = 54, ranks 14, 28 and 41), each with its confidence and the rule
    # that chose them; no "1 edits"
    n = summary["counterfactuals"]
    assert 0 < n < 60
    ranks = [int(k / 4 * (n - 1) + 0.5) + 1 for k in (1, 2, 3)]
    heads = [ln for ln in out.splitlines() if ln.startswith("  P(") and "by the method's own judge" in ln]
    assert [h.rsplit(",", 1)[1] for h in heads] == [f" confidence rank {r} of {n}" for r in ranks], heads
    probs = [float(h.split()[1]) for h in heads]
    assert probs == sorted(probs, reverse=True) and min(probs) > 0.5, probs
    assert f"3 typical examples of {n}: the rewrites at the quartiles of the confidence" in out
    assert " 1 edits" not in out
    # the summary names the threshold behind the own judge's flip rate (flip_min_prob)
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("flip rate, own judge")]
    assert "with P(target) >= 0.50" in line and "above 0.5" in line, line
    assert (tmp_path / "home" / ".cache" / "cfaug" / "models").is_dir()  # trained into the empty store
    assert "Loading weights" not in proc.stderr  # transformers' own bar stays silent when cfaug loads a model


def test_the_default_output_folder_is_git_ignored():
    """``cfaug demo`` run in a checkout writes into a folder git does not offer to commit."""
    import argparse
    import shutil
    import subprocess
    from pathlib import Path

    import pytest

    from cfaug.cli.demo import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    out = parser.parse_args(["demo"]).out
    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    for path in (f"{out}/counterfactuals.jsonl", f"{out}/counterfactuals.jsonl.run/config.json", f"{out}/report.html"):
        res = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=root)
        assert res.returncode == 0, f"{path} (what 'cfaug demo' writes) is not git-ignored"
    # what the README's quick start and the docs build write in the checkout
    for path in ("cf.jsonl", "cf.jsonl.run/summary.json", "cf.jsonl.run/metrics.json", "report.html",
                 "site/index.html"):
        res = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=root)
        assert res.returncode == 0, f"{path} (what following the README writes) is not git-ignored"
    assert subprocess.run(["git", "check-ignore", "-q", "--no-index", "docs/index.md"], cwd=root).returncode == 1


# --- the printed examples and next steps ----------------------------------------------------------------------


def row(i: int, prob: float | None, n_edits: int = 2) -> dict:
    meta = {"variant": "rep-ct", "edit_rate": 0.05,
            "edits": [{"start": 0, "end": 1, "old": "a", "new": "b"}] * n_edits}
    if prob is not None:
        meta["own_judge"] = {"name": "tfidf-logreg", "target_prob": prob, "flipped": prob >= 0.9, "threshold": 0.9}
        meta["confidence"] = prob
    return {"source_id": f"r{i}", "original_Sentiment": "Positive", "Sentiment": "Negative", "meta": meta}


def test_plural():
    assert [plural(n, "edit") for n in (0, 1, 2)] == ["0 edits", "1 edit", "2 edits"]


def test_examples_are_typical_ones_at_the_quartiles_of_the_confidence():
    # ranked by confidence: r1 0.99, r4 0.95, r6 0.8, r3 0.7, r0 0.5, r5 0.3, r2 0.1 (and r7 0.05, r8 0.01)
    rows = [row(i, p) for i, p in enumerate([0.5, 0.99, 0.1, 0.7, 0.95, 0.3, 0.8, 0.05, 0.01])]
    picked = pick_examples(rows, 3)
    assert [(rank, r["source_id"]) for rank, r in picked] == [(3, "r6"), (5, "r0"), (7, "r2")]
    assert all(rank not in (1, len(rows)) for rank, _ in picked)  # neither the most nor the least confident
    assert [(rank, r["source_id"]) for rank, r in pick_examples(rows, 1)] == [(5, "r0")]  # the median
    assert len(pick_examples(rows, 50)) == 9 and pick_examples(rows, 0) == []
    # rows without a confidence are left out while some have one; ties keep input order
    tied = [row(0, None), row(1, 0.6), row(2, 0.6), row(3, 0.2)]
    assert [r["source_id"] for _, r in pick_examples(tied, 1)] == ["r2"]
    assert [r["source_id"] for _, r in pick_examples([row(0, None), row(1, None), row(2, None)], 1)] == ["r1"]


def test_each_example_says_its_confidence_and_counts_edits_in_words():
    text = describe_example(row(3, 0.9981, n_edits=1), 1, 60)
    assert text.startswith("[r3] Positive -> Negative (rep-ct, 1 edit, edit rate 5.0%)")
    assert "P(Negative) 0.998 by the method's own judge, the most confident of 60" in text
    assert "the least confident of 60" in describe_example(row(4, 0.07), 60, 60)
    assert "confidence rank 31 of 60" in describe_example(row(5, 0.88), 31, 60)
    assert "2 edits" in describe_example(row(6, 0.5), 2, 60)
    assert "no confidence recorded" in describe_example(row(7, None), 3, 3)


def test_next_steps_name_only_registered_commands():
    out, run_dir, report = Path("d/counterfactuals.jsonl"), Path("d/counterfactuals.jsonl.run"), Path("d/report.html")
    have = {("report",), ("evaluate",)}
    text = "\n".join(next_steps(out, run_dir, report, have))
    assert "cfaug evaluate d/counterfactuals.jsonl\n" in text and "--run-dir" not in text
    assert "cfaug report d/counterfactuals.jsonl.run -o d/report.html" in text and "cfaug review" not in text
    assert "cfaug augment" not in text
    with_review = have | {("review",), ("review", "serve")}
    assert "cfaug review serve d/counterfactuals.jsonl.run" in "\n".join(next_steps(out, run_dir, report, with_review))
    assert "cfaug review" not in "\n".join(next_steps(out, run_dir, report, have | {("review",)}))  # no 'serve' there
    assert next_steps(out, Path("my runs/r.run"), report, have)[3].startswith("  cfaug report 'my runs/r.run'")


def test_next_steps_and_the_readme_quick_start_share_one_run_directory_convention():
    """The demo's run directory is OUTPUT.run, and its next steps end with the README's quick start on the demo's
    input, word for word: one naming of outputs and run directories for a new user to follow."""
    from cfaug.cli.demo import run_dir_of

    out = Path("cfaug-demo/counterfactuals.jsonl")
    assert run_dir_of(out) == Path("cfaug-demo/counterfactuals.jsonl.run")
    steps = [line.strip() for line in next_steps(out, run_dir_of(out), Path("cfaug-demo/report.html"))]
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    quick = readme[readme.index("## Quick start"):]
    quick = quick[quick.index("```bash"):quick.index("```", quick.index("```bash") + 3)]
    commands = [line.split("#")[0].strip() for line in quick.splitlines() if line.startswith("cfaug ")]
    assert commands[0] in steps  # cfaug augment cfaug-demo/reviews.tsv -o cf.jsonl ...
    for command in commands:
        for word in command.split():
            if word.endswith(".run"):  # every run directory named is OUTPUT.run
                assert any(f"-o {word[:-4]}" in c for c in commands), command
    assert not any("--run-dir" in c for c in commands + steps)


def test_registered_commands_follow_the_command_modules(monkeypatch):
    """The demo offers 'cfaug review serve' because the review command is registered; without it, not."""
    import cfaug.cli

    real = registered_commands()
    assert {("report",), ("evaluate",), ("demo",), ("review", "serve")} <= real
    steps = "\n".join(next_steps(Path("o.jsonl"), Path("o.jsonl.run"), Path("report.html")))
    assert "cfaug review serve o.jsonl.run" in steps
    monkeypatch.setattr(cfaug.cli, "COMMAND_MODULES", tuple(m for m in cfaug.cli.COMMAND_MODULES
                                                            if not m.endswith(".review")))
    assert ("review", "serve") not in registered_commands()
    assert "cfaug review" not in "\n".join(next_steps(Path("o.jsonl"), Path("o.jsonl.run"), Path("report.html")))


def test_html_line_breaks_read_as_spaces_in_the_terminal():
    text = "It was good.<br /><br />Really <BR>good."
    i = text.index("Really")
    assert marked_excerpts(text, [{"start": i, "end": i + 6, "old": "Really", "new": "Truly"}], context=40) == (
        "It was good. [Really -> Truly] good. ...")
