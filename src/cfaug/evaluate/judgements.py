"""The independent judge's verdict on each counterfactual of a run: ``RUN_DIR/judgements.jsonl``.

``cfaug evaluate RUN_DIR`` with a flip-rate judge writes one line per scored row of the run directory::

    {"item": "<key>#<n>", "source_id": ..., "method": ..., "judge": "<judge name>", "predicted": "<label>",
     "target": "<label>", "target_prob": 0.93, "flipped": true, "text_sha1": "<sha1 of the judged text>"}

``item`` is the row's id in the run directory (the ``results.jsonl`` line's key and the row's index in its
``counterfactuals``), the id review decisions use; ``text_sha1`` lets a reader ignore a verdict on a text
that has changed since. The file is replaced as a whole (written beside and renamed) on each evaluation.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfaug.data.inputs import JudgeInput
from cfaug.data.io import DataError
from cfaug.data.io.atomic import atomic_open
from cfaug.evaluate.pairs import CounterfactualPair

JUDGEMENTS_FILE = "judgements.jsonl"


def text_hash(judge_input: JudgeInput | str) -> str:
    """SHA-1 of what the judge read (the text, or the fields of a pair joined by a tab)."""
    text = judge_input if isinstance(judge_input, str) else "\t".join(judge_input)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def judgement_rows(pairs: Sequence[CounterfactualPair], predicted: Sequence[str], target_prob: Sequence[float],
                   judge_info: dict[str, Any]) -> list[dict[str, Any]]:
    """One verdict per pair read from a run directory (pairs without an ``item_id`` are left out)."""
    name = str(judge_info.get("judge") or judge_info.get("name") or "judge")
    rows = []
    for k, p in enumerate(pairs):
        if p.item_id is None:
            continue
        prob = target_prob[k] if k < len(target_prob) else None
        rows.append({"item": p.item_id, "source_id": p.source_id, "method": p.method, "judge": name,
                     "predicted": predicted[k], "target": p.target,
                     "target_prob": None if prob is None else round(float(prob), 6),
                     "flipped": predicted[k] == p.target, "text_sha1": text_hash(p.judge_input)})
    return rows


def write_judgements(run_dir: str | os.PathLike[str], rows: Sequence[dict[str, Any]]) -> Path:
    """Replace ``RUN_DIR/judgements.jsonl`` with ``rows`` (written beside, then renamed)."""
    path = Path(run_dir) / JUDGEMENTS_FILE
    with atomic_open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def read_judgements(run_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The verdicts in ``RUN_DIR/judgements.jsonl`` by item id ({} when there is no such file). A line
    that is not a JSON object with an ``item`` raises :class:`~cfaug.data.io.DataError` naming file and line."""
    path = Path(run_dir) / JUDGEMENTS_FILE
    if not path.exists():
        return {}
    out: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise DataError(f"{path}, line {n}: not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("item"), str):
                raise DataError(f"{path}, line {n}: expected an object with an 'item' id")
            out[obj["item"]] = obj
    return out
