"""Opening any supported source as rows, before any column mapping: the one entry point of every reader."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cfaug.data.io.aste_lines import _iter_aste
from cfaug.data.io.delimited import _iter_delimited
from cfaug.data.io.errors import DataError
from cfaug.data.io.formats import detect_format
from cfaug.data.io.jsonl import _iter_jsonl
from cfaug.data.io.tables import (
    _is_dataframe,
    _iter_parquet,
    _iter_saved_dataset,
    _iter_table,
)


def open_rows(source: Any, fmt: str | None) -> tuple[str, list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    """Rows of any supported source, before any column mapping: (name for messages, columns, iterator of
    (row number, row dict or a problem string)). Used by every reader of user files."""
    hf = sys.modules.get("datasets")  # a Dataset object exists only once datasets is imported (a slow import)
    if hf is not None and isinstance(source, hf.Dataset):
        return "<dataset>", list(source.column_names), _iter_table(source, list(source.column_names))[1]
    if _is_dataframe(source):
        records = source.to_dict(orient="records")
        return "<dataframe>", [str(c) for c in source.columns], _iter_table(records, list(source.columns))[1]
    if isinstance(source, list):
        cols = list(source[0]) if source and isinstance(source[0], dict) else []
        return "<list>", cols, _iter_table(source, cols)[1]
    path = Path(source)
    if not path.exists():
        raise DataError(f"{path}: no such file or folder")
    kind = detect_format(path, fmt)
    if kind == "csv":
        cols, it = _iter_delimited(path, ",")
    elif kind == "tsv":
        cols, it = _iter_delimited(path, "\t")
    elif kind == "jsonl":
        cols, it = _iter_jsonl(path)
    elif kind == "aste":
        cols, it = _iter_aste(path)
    elif kind == "parquet":
        cols, it = _iter_parquet(path)
    else:
        cols, it = _iter_saved_dataset(path)
    return str(path), cols, it
