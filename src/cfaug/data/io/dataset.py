"""Reading a source into a :class:`Dataset`: rows become :class:`~cfaug.data.records.Record` objects or
:class:`~cfaug.data.io.errors.Reject` entries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cfaug.data.io.cells import _cell_text, _jsonable_row, _kind, _number
from cfaug.data.io.encoding import _unicode_problem
from cfaug.data.io.errors import DataError, Reject
from cfaug.data.io.label_codings import _check_numeric_labels
from cfaug.data.io.sources import open_rows
from cfaug.data.labels import LabelError
from cfaug.data.records import Record
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task
from cfaug.quoting import quote, quote_list

DEFAULT_MAX_CHARS = 100_000


@dataclass
class Dataset:
    """Records read from one source, plus what was rejected and how labels were spelled."""

    records: list[Record]
    rejects: list[Reject]
    schema: Schema
    source: str
    rows_read: int
    extra_columns: list[str] = field(default_factory=list)


def read_dataset(
    source: Any,
    task: Task,
    schema: Schema | None = None,
    *,
    fmt: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Dataset:
    """Read ``source`` (path, ``datasets.Dataset``, DataFrame or list of dicts) into records.

    Rows with an empty or oversized text, a missing or unknown label, undecodable bytes, a duplicate id or
    a malformed line become :class:`Reject` entries; the rest are returned as :class:`Record` objects.
    Whole-file problems (missing file, empty file, missing column) raise :class:`DataError`.
    """
    name, columns, row_iter = open_rows(source, fmt)
    rows = list(row_iter)
    resolved = (schema or Schema()).resolve(columns, task, name, sample_values=_sample_values(rows, columns))
    if not resolved.label_map:
        _check_numeric_labels(rows, resolved, task, name)
    used = set(resolved.columns())
    extra = [c for c in columns if c not in used]
    records: list[Record] = []
    rejects: list[Reject] = []
    seen_ids: dict[str, int] = {}
    rows_read = 0
    for rownum, row in rows:
        rows_read += 1
        if isinstance(row, str):
            rejects.append(Reject(name, rownum, row))
            continue
        problem, record = _row_to_record(row, rownum, resolved, task, max_chars)
        if record is not None and record.id in seen_ids:
            problem = f"duplicate id {quote(record.id)} (first seen in row {seen_ids[record.id]})"
            record = None
        if record is None:
            rejects.append(Reject(name, rownum, problem or "invalid row", _jsonable_row(row)))
            continue
        seen_ids[record.id] = rownum
        records.append(record)
    if rows_read == 0:
        raise DataError(f"{name}: no data rows")
    return Dataset(records, rejects, resolved, name, rows_read, extra)


def _sample_values(rows: Sequence[tuple[int, dict[str, Any] | str]], columns: Sequence[str],
                   most: int = 7, scan: int = 2000) -> dict[str, list[str]]:
    """A few distinct short values of each column (from the first ``scan`` rows), for error messages."""
    out: dict[str, list[str]] = {c: [] for c in columns}
    for _, row in rows[:scan]:
        if isinstance(row, str):
            continue
        for c in columns:
            vals = out[c]
            text = _cell_text(row.get(c))
            if text is not None and len(vals) < most and len(text) <= 40 and text.strip() not in vals:
                vals.append(text.strip())
    return out


def _row_to_record(row: dict[str, Any], rownum: int, schema: Schema, task: Task, max_chars: int) -> tuple[str | None, Record | None]:
    fields: dict[str, str] = {}
    for role, col in schema.text_cols.items():
        if col not in row:
            return f"missing column {quote(col)}", None
        value = _cell_text(row[col])
        if value is None or not value.strip():
            return f"empty text in column {quote(col)}", None
        kind = _kind(row[col])
        if kind is not None:
            return f"text in column {quote(col)} is {kind}, not a string", None
        problem = _unicode_problem(value, col)
        if problem:
            return problem, None
        if len(value) > max_chars:
            return f"text in column {quote(col)} has {len(value):,} characters, over the limit of {max_chars:,} (--max-chars)", None
        fields[role] = value
    raw_label = row.get(schema.label_col) if schema.label_col else None
    kind = _kind(raw_label)
    if kind not in (None, "a number", "true/false"):
        return f"label in column {quote(schema.label_col)} is {kind}, not a string or number", None
    if isinstance(raw_label, str):
        problem = _unicode_problem(raw_label, str(schema.label_col))
        if problem:
            return problem, None
    try:
        if schema.label_map:
            raw_text = (_cell_text(raw_label) or "").strip()
            mapped = schema.label_map.get(raw_text)
            if mapped is None and _number(raw_text) is not None:
                mapped = next((v for k, v in schema.label_map.items() if _number(k) == _number(raw_text)), None)
            if mapped is None:
                return (f"label {quote(raw_text)} in column {quote(schema.label_col)} is not in --label-map "
                        f"({quote_list(schema.label_map)})"), None
            label = task.label_space.read(mapped)
        else:
            label = task.label_space.read(_cell_text(raw_label))
    except LabelError as exc:
        return f"{exc} in column {quote(schema.label_col)}", None
    if schema.id_col:
        raw_id = row.get(schema.id_col)
        kind = _kind(raw_id)
        if kind not in (None, "a number"):
            return f"id in column {quote(schema.id_col)} is {kind}, not a string or number", None
        rid = _cell_text(raw_id)
        if rid is None or not rid.strip():
            return f"empty id in column {quote(schema.id_col)}", None
        problem = _unicode_problem(rid, schema.id_col)
        if problem:
            return problem, None
        rid = rid.strip()
    else:
        rid = str(rownum)
    used = set(schema.columns())
    meta = {k: v for k, v in row.items() if k not in used and k is not None}
    record = Record(id=rid, fields=fields, label=label, meta=_jsonable_row(meta))
    problem = task.check_record(record)
    if problem:
        return f"{problem} (column {quote(schema.label_col)})", None
    return None, record
