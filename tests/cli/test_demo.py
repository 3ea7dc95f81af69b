"""``cfaug demo``: the packaged sample exists and edits are shown in their context."""

from __future__ import annotations

import csv

from cfaug.cli.demo import marked_excerpts, sample_path


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
    for path in (f"{out}/counterfactuals.jsonl", f"{out}/run/config.json"):
        res = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=root)
        assert res.returncode == 0, f"{path} (what 'cfaug demo' writes) is not git-ignored"
