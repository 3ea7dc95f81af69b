"""Writing rows as CSV, TSV, JSONL, Parquet, a Hugging Face ``save_to_disk`` folder or ASTE-Data-V2 lines
(through :mod:`cfaug.data.io.aste_lines`)."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cfaug.data.io.aste_lines import _write_aste_rows
from cfaug.data.io.atomic import atomic_open, atomic_path, is_stdout
from cfaug.data.io.formats import detect_format

#: the formats standard output (``-``) can take: a stream of lines
STREAM_FORMATS = ("jsonl", "csv", "tsv")


def output_kind(path: str | os.PathLike[str], fmt: str | None = None, flag: str = "--output-format") -> str:
    """The format rows are written in: ``fmt``, else from the name, a folder meaning a Hugging Face dataset and
    ``-`` (standard output) meaning JSONL. Raises :class:`~cfaug.data.io.DataError` for a format standard
    output cannot take."""
    if is_stdout(path):
        kind = detect_format(path, fmt, flag) if fmt else "jsonl"
        if kind not in STREAM_FORMATS:
            from cfaug.data.io.errors import DataError

            raise DataError(f"- (standard output) takes {', '.join(STREAM_FORMATS)}, not {kind}; name a file for "
                            f"{kind}")
        return kind
    return detect_format(path, fmt, flag) if fmt or not Path(path).is_dir() else "hf"


def write_rows(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str], fmt: str | None = None,
               columns: Sequence[str] | None = None) -> None:
    """Write row dicts. JSONL keeps nested objects; CSV/TSV/Parquet/HF store them as JSON strings. A file
    is written atomically (:mod:`cfaug.data.io.atomic`): a failure leaves the old file as it was. ``-`` writes
    JSONL, CSV or TSV to standard output."""
    kind = output_kind(path, fmt)
    if not is_stdout(path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(columns) if columns else _union_columns(rows)
    if kind == "jsonl":
        with atomic_open(path, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps({c: r.get(c) for c in cols}, ensure_ascii=False) + "\n")
        return
    if kind == "aste":
        with atomic_path(path) as tmp:
            _write_aste_rows(rows, tmp, cols, path)
        return
    flat = [{c: _flat(r.get(c)) for c in cols} for r in rows]
    if kind in ("csv", "tsv"):
        with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, delimiter="," if kind == "csv" else "\t")
            w.writeheader()
            w.writerows(flat)
    elif kind == "parquet":
        import pandas as pd

        with atomic_path(path) as tmp:
            pd.DataFrame(flat, columns=cols).to_parquet(tmp, index=False)
    else:
        import datasets as hf

        # from_dict keeps the columns when there are no rows; datasets cannot reload a 0-shard save
        table = hf.Dataset.from_dict({c: [r[c] for r in flat] for c in cols})
        table.save_to_disk(str(path), num_shards=1 if not flat else None)


def _flat(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return value


def _union_columns(rows: Iterable[dict[str, Any]]) -> list[str]:
    cols: dict[str, None] = {}
    for r in rows:
        for c in r:
            cols.setdefault(c, None)
    return list(cols)
