"""The rows every method of a comparison works on: the input's valid rows, or with ``--limit`` the sample
``cfaug augment --limit`` takes from the same file with the same seed (:mod:`cfaug.data.sampling`: seeded,
balanced by label), written to ``DIR/sample.jsonl`` in the input's own columns.

Ids stay those of the input: a sampled row keeps its id column, and an input without one gets an ``id``
column holding the row number the input gives it (what ``cfaug augment`` on the whole input would use),
so ``source_id`` in every method's output names the same row of the input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfaug.data.io import Dataset, read_dataset
from cfaug.data.io.sources import open_rows
from cfaug.data.records import Record
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task

SAMPLE_FILE = "sample.jsonl"
#: the id column an input without one gets in the sample
ID_COLUMN = "id"


@dataclass
class Sample:
    """The sampled records (in input order), where they were written, and what was left out."""

    records: list[Record]
    path: Path
    rows_valid: int
    rows_read: int
    rows_rejected: int
    label_counts: dict[str, int] = field(default_factory=dict)
    #: whether ``--limit`` left rows out
    sampled: bool = False
    #: which rows were taken, e.g. ``20 of 60: a seeded sample balanced by label (seed 0)``
    rows_taken: str = ""

    def describe(self) -> dict[str, Any]:
        return {"sample": str(self.path.name), "rows": len(self.records), "rows_valid": self.rows_valid,
                "rows_read": self.rows_read, "rows_rejected": self.rows_rejected, "labels": self.label_counts,
                "sampled": self.sampled, "rows_taken": self.rows_taken}


def read_input(source: Any, task: Task, schema: Schema, *, fmt: str | None = None, max_chars: int | None = None
               ) -> Dataset:
    """The input's records as the runner reads them."""
    kwargs = {"fmt": fmt} if max_chars is None else {"fmt": fmt, "max_chars": max_chars}
    return read_dataset(source, task, schema, **kwargs)


def write_sample(source: str | Path, data: Dataset, out_dir: Path, limit: int | None, seed: int,
                 fmt: str | None = None, balanced: bool = True) -> Sample:
    """Choose the rows as ``cfaug augment --limit`` does (:func:`cfaug.data.sampling.sample_positions`;
    ``balanced``: whether the task's labels form a fixed set to balance) and write them to
    ``out_dir/sample.jsonl``."""
    from cfaug.data.io.cells import _cell_text
    from cfaug.data.sampling import describe_taken, sample_positions

    records = data.records
    idx = sample_positions([r.id for r in records], [r.label for r in records] if balanced else None, limit, seed)
    chosen = [records[i] for i in idx]
    _, _, it = open_rows(source, fmt)
    raw: dict[str, dict[str, Any]] = {}
    id_col = data.schema.id_col
    for rownum, row in it:
        if not isinstance(row, dict):
            continue
        key = (_cell_text(row.get(id_col)) or "").strip() if id_col else str(rownum)
        raw.setdefault(key, row)
    from cfaug.run.outputs import atomic_open

    path = Path(out_dir) / SAMPLE_FILE
    with atomic_open(path, "w", encoding="utf-8") as fh:
        for r in chosen:
            row = dict(raw[r.id])
            if not id_col:
                row = {ID_COLUMN: r.id, **row}
            fh.write(json.dumps(row, ensure_ascii=False, default=_plain) + "\n")
    counts: dict[str, int] = {}
    for r in chosen:
        counts[str(r.label)] = counts.get(str(r.label), 0) + 1
    return Sample(chosen, path, len(records), data.rows_read, len(data.rejects), dict(sorted(counts.items())),
                  sampled=len(chosen) < len(records),
                  rows_taken=describe_taken(len(chosen), len(records), seed, balanced))


def _plain(value: Any) -> Any:
    """numpy scalars and other cell values JSON does not know, as plain values."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)
