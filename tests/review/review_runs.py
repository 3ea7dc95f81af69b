"""Run directories for the review web app's tests (test_app, test_server_kill, test_browser).

:func:`real_run` makes one with ``cfaug augment`` itself: the zero-shot method on the first rows of the
sentiment fixture, through the scripted loopback LLM server (tests/llm/server.py), whose answers swap the
sentiment words of each text; one answer carries a ``<script>`` element, for the escaping tests. It takes
a few seconds and downloads nothing.

:func:`judged_run` writes one the way :class:`cfaug.run.rundir.RunDir` does (config, results appended line
by line), with what a zero-shot run lacks: the own judge's confidence, two methods, and rows that failed.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import cfaug_tests_llm_server as llm_server

from cfaug.cli import main
from cfaug.run.rundir import RunDir

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "sentiment.tsv"
#: the first rows of the fixture rewritten by the real run
ROWS = 8
#: the rewrite of this source row ends with a script element
SCRIPT_ROW = "r03"
SCRIPT = "<script>window.__pwned = 1; alert('pwned')</script>"

SWAPS = {
    "wonderful": "dreadful", "brilliant": "clumsy", "great": "poor", "boring": "gripping", "weak": "strong",
    "terrible": "superb", "excellent": "wooden", "beautiful": "clumsy", "awful": "superb", "dull": "gripping",
    "loved": "hated", "hated": "loved", "charming": "tiresome", "tedious": "charming", "moving": "flat",
    "bad": "good", "stupid": "clever", "predictable": "surprising", "superb": "dull", "annoying": "lovely",
    "poor": "fine",
}
_PROMPT = re.compile(r"Text:\n(?P<text>.*?)\n\nCurrent sentiment: \w+\nTarget sentiment: (?P<target>\w+)", re.DOTALL)


def _rewrite(_body: dict, prompt: str) -> str:
    m = _PROMPT.search(prompt)
    if not m:
        return "OK"
    text = re.sub(r"\w+", lambda w: SWAPS.get(w.group(0).lower(), w.group(0)), m.group("text"))
    if "acting is excellent" in m.group("text"):  # row r03
        text += " " + SCRIPT
    return f"<revised>{text}</revised>"


def real_run(path: Path, rows: int = ROWS) -> Path:
    """``cfaug augment`` (zero-shot, scripted LLM) on the first ``rows`` rows of the fixture; returns the
    run directory."""
    run_dir = path / "run"
    # the first rows as a file of their own (--limit N takes a sample, not the first N)
    first = path / "input.tsv"
    first.write_text("".join(FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)[: rows + 1]),
                     encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with llm_server.FakeLLM(default_reply=_rewrite, log_requests=False) as srv, redirect_stdout(out), \
            redirect_stderr(err):
        code = main(["augment", str(first), "-o", str(path / "out.jsonl"), "--run-dir", str(run_dir),
                     "--method", "zero-shot", "--llm-base-url", srv.base_url, "--llm-model", "scripted",
                     "--no-cache", "--no-progress",
                     "-p", "flip_check=none"])  # scripted answers: no classifier flip check
    assert code == 0, err.getvalue()
    return run_dir


CONFIG = {
    "method": "auto-cad.v1", "params": {},
    "task": {"name": "sentiment", "target": "opposite", "edit_roles": ["text"]},
    "schema": {"text_cols": {"text": "Text"}, "label_col": "Sentiment", "id_col": "id"},
    "seed": 0, "input": "reviews.tsv", "input_hash": "sha256:" + "0" * 64, "max_chars": 100000, "limit": None,
    "train_data": None, "model": None,
}


def judged_row(i: int, *, method: str = "auto-cad.v1", confidence: float | None = 0.9, passed: bool = True,
               threshold: float = 0.5, text: str | None = None) -> dict:
    """One output row in the contract's columns: a positive review made negative."""
    original = f"Review {i}: a good film with a fine cast."
    meta: dict = {"passed": passed}
    if confidence is not None:
        meta["own_judge"] = {"name": "tfidf-logreg", "target_prob": confidence,
                             "flipped": confidence >= threshold, "threshold": threshold}
        meta["confidence"] = confidence
    return {"Text": text if text is not None else f"Review {i}: a bad film with a weak cast.",
            "Sentiment": "Negative", "source_id": f"s{i}", "original_Text": original,
            "original_Sentiment": "Positive", "method": method, "meta": meta}


def write_run(run_dir: Path, rows: list[dict], config: dict | None = None) -> Path:
    """A finished run directory holding ``rows`` (one work item per row), written through RunDir."""
    rd = RunDir(run_dir)
    rd.open(config or CONFIG)
    with rd.appender() as app:
        for row in rows:
            app.append({"key": f"{row['source_id']}\u241fnegative", "source_id": row["source_id"],
                        "target": "negative", "status": "ok", "counterfactuals": [row]})
    return run_dir


def judged_run(run_dir: Path) -> Path:
    """Ten rows with known own-judge confidences, over two methods; row 9 failed the method's filters.
    The independent judge (``judgements.jsonl``, as ``cfaug evaluate`` writes it) judged rows 4 and 6: it
    says row 4 (own judge: 0.99, flipped) kept its label, and agrees on row 6."""
    from cfaug.evaluate.judgements import text_hash, write_judgements

    confidences = [0.95, 0.52, 0.7, 0.1, 0.99, 0.45, 0.8, 0.6, 0.3, 0.5]
    rows = [judged_row(i, confidence=c, method="auto-cad.v1" if i % 2 == 0 else "zero-shot.v1",
                       passed=i != 9) for i, c in enumerate(confidences)]
    write_run(run_dir, rows)
    write_judgements(run_dir, [
        {"item": f"s{i}\u241fnegative#0", "source_id": f"s{i}", "method": rows[i]["method"], "judge": "sst2-distilbert",
         "predicted": predicted, "target": "negative", "target_prob": prob, "flipped": predicted == "negative",
         "text_sha1": text_hash(rows[i]["Text"])}
        for i, predicted, prob in ((4, "positive", 0.2), (6, "negative", 0.9))])
    return run_dir
