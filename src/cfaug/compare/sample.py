"""The rows every method of a comparison works on: the input's valid rows, or with ``--limit`` a seeded
sample stratified by label, written to ``DIR/sample.jsonl`` in the input's own columns.

Ids stay those of the input: a sampled row keeps its id column, and an input without one gets an ``id``
column holding the row number the input gives it (what ``cfaug augment`` on the whole input would use),
so ``source_id`` in every method's output names the same row of the input.
"""

from __future__ import annotations

import json
import random
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
    stratified: bool = False

    def describe(self) -> dict[str, Any]:
        return {"sample": str(self.path.name), "rows": len(self.records), "rows_valid": self.rows_valid,
                "rows_read": self.rows_read, "rows_rejected": self.rows_rejected, "labels": self.label_counts,
                "stratified": self.stratified}


def stratified_indices(labels: list[str], limit: int | None, seed: int) -> list[int]:
    """Positions of a sample of ``limit`` rows with each label's share kept (largest remainders; at least
    one row per label when ``limit`` allows), drawn with ``random.Random(seed)``; sorted, so the sample keeps
    the input order. All positions when ``limit`` is None or not below the number of rows."""
    n = len(labels)
    if limit is None or limit >= n:
        return list(range(n))
    by_label: dict[str, list[int]] = {}
    for i, y in enumerate(labels):
        by_label.setdefault(y, []).append(i)
    order = sorted(by_label)
    quota = {y: limit * len(by_label[y]) / n for y in order}
    take = {y: int(quota[y]) for y in order}
    if limit >= len(order):  # every label present in the sample when it can be
        for y in order:
            take[y] = max(take[y], 1)
    while sum(take.values()) > limit:  # the minimum of one may have overshot: trim the largest
        y = max(order, key=lambda k: (take[k] - quota[k], take[k]))
        take[y] -= 1
    for y in sorted(order, key=lambda k: (-(quota[k] - take[k]), k)):
        if sum(take.values()) >= limit:
            break
        if take[y] < len(by_label[y]):
            take[y] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for y in order:
        chosen += rng.sample(by_label[y], take[y])
    return sorted(chosen)


def read_input(source: Any, task: Task, schema: Schema, *, fmt: str | None = None, max_chars: int | None = None
               ) -> Dataset:
    """The input's records as the runner reads them."""
    kwargs = {"fmt": fmt} if max_chars is None else {"fmt": fmt, "max_chars": max_chars}
    return read_dataset(source, task, schema, **kwargs)


def write_sample(source: str | Path, data: Dataset, out_dir: Path, limit: int | None, seed: int,
                 fmt: str | None = None) -> Sample:
    """Choose the rows (see :func:`stratified_indices`) and write them to ``out_dir/sample.jsonl``."""
    from cfaug.data.io.cells import _cell_text

    records = data.records
    idx = stratified_indices([str(r.label) for r in records], limit, seed)
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
                  stratified=len(chosen) < len(records))


def _plain(value: Any) -> Any:
    """numpy scalars and other cell values JSON does not know, as plain values."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)
