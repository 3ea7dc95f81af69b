"""Run directories for the tests of items, export, stats and Label Studio (written as 'cfaug augment' writes
them: config.json, manifest.json, results.jsonl), with decisions recorded through the review store."""

from __future__ import annotations

import json
from pathlib import Path

from cfaug.run.decisions import ReviewStore

SENTIMENT_CONFIG = {
    "method": "auto-cad.v1", "params": {"variants": "rm,rep"},
    "task": {"name": "sentiment", "target": "opposite", "edit_roles": ["text"]},
    "schema": {"text_cols": {"text": "Text"}, "label_col": "Sentiment", "id_col": "id"},
    "seed": 3, "input": "reviews.tsv", "input_hash": "sha256:" + "ab" * 32, "limit": None,
}
NLI_CONFIG = {
    "method": "zero-shot.v1", "params": {},
    "task": {"name": "nli", "target": "contradiction", "edit_roles": ["hypothesis"]},
    "schema": {"text_cols": {"premise": "premise", "hypothesis": "hypothesis"}, "label_col": "label"},
    "seed": 0, "input": "snli.jsonl", "input_hash": "sha256:" + "cd" * 32,
}


def sentiment_row(i: int, *, method: str = "auto-cad.v1", confidence: float | None = None, passed: bool = True,
                  text: str | None = None, threshold: float | None = None) -> dict:
    """A positive review made negative, in the output contract's columns."""
    meta: dict = {"passed": passed}
    if confidence is not None:
        meta["own_judge"] = {"name": "tfidf-logreg", "target_prob": confidence, "flipped": confidence >= (threshold or 0.5)}
        if threshold is not None:
            meta["own_judge"]["threshold"] = threshold
    return {"Text": text or f"Review {i}: a bad film with a weak cast.", "Sentiment": "Negative", "source_id": f"s{i}",
            "original_Text": f"Review {i}: a good film with a fine cast.", "original_Sentiment": "Positive",
            "method": method, "meta": meta}


def write_run(path: Path, lines: list[list[dict]], config: dict | None = None, *, metrics: dict | None = None) -> Path:
    """A run directory whose results.jsonl has one line per entry of ``lines`` (each a list of rows);
    keys are ``k0``, ``k1``, ..."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(config or SENTIMENT_CONFIG), encoding="utf-8")
    (path / "manifest.json").write_text(json.dumps({"versions": {"cfaug": "9.9.9"}, "input_hash": "sha256:x"}),
                                        encoding="utf-8")
    if metrics is not None:
        (path / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    with open(path / "results.jsonl", "w", encoding="utf-8") as fh:
        for k, rows in enumerate(lines):
            fh.write(json.dumps({"key": f"k{k}", "source_id": f"s{k}", "target": "negative", "status": "ok",
                                 "counterfactuals": rows}) + "\n")
    return path


def simple_run(path: Path, n: int = 6, **kw) -> Path:
    """``n`` items, one per line, methods alternating (auto-cad.v1, zero-shot.v1)."""
    return write_run(path, [[sentiment_row(i, method="auto-cad.v1" if i % 2 == 0 else "zero-shot.v1")]
                            for i in range(n)], **kw)


def record(run_dir: Path, decisions: list[tuple]) -> None:
    """Record ``(item, annotator, decision, kwargs)`` tuples (kwargs optional)."""
    with ReviewStore(run_dir) as store:
        for d in decisions:
            item, annotator, decision, *rest = d
            store.record(item, annotator, decision, **(rest[0] if rest else {}))
