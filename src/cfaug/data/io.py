"""Read and write CSV, TSV, JSONL, Parquet and Hugging Face ``datasets`` (objects or ``save_to_disk``
folders). Reading is row-tolerant: a bad row becomes a :class:`Reject` naming file, row and problem, and
every other row is still read."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cfaug.data.labels import LabelError
from cfaug.data.records import Record
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task

FORMATS = ("csv", "tsv", "jsonl", "parquet", "hf")
DEFAULT_MAX_CHARS = 100_000

csv.field_size_limit(sys.maxsize)


class DataError(ValueError):
    """The input as a whole cannot be read (missing file, empty file, unknown format, missing column)."""


@dataclass
class Reject:
    """A row that was not used, with where it came from and why."""

    source: str
    row: int
    problem: str
    raw: dict[str, Any] | str | None = None

    def message(self) -> str:
        return f"{self.source}, row {self.row}: {self.problem}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Dataset:
    """Records read from one source, plus what was rejected and how labels were spelled."""

    records: list[Record]
    rejects: list[Reject]
    schema: Schema
    source: str
    rows_read: int
    extra_columns: list[str] = field(default_factory=list)


def detect_format(path: str | os.PathLike[str], fmt: str | None = None, flag: str = "--format") -> str:
    """Choose a format from an explicit flag or the file extension (a folder is a HF dataset).
    ``flag`` names the option that sets the format, for the error message."""
    if fmt:
        if fmt not in FORMATS:
            raise DataError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    p = Path(path)
    if p.is_dir():
        return "hf"
    suffixes = [s.lower() for s in p.suffixes]
    for s in reversed(suffixes):
        s = s.lstrip(".")
        if s in ("csv", "tsv", "parquet"):
            return s
        if s in ("jsonl", "ndjson", "json"):
            return "jsonl"
        if s == "pq":
            return "parquet"
    raise DataError(f"{path}: cannot tell the format from the name; pass {flag} ({', '.join(FORMATS)})")


# ---------------------------------------------------------------------------------------------- reading


def _has_undecodable(value: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in value)


def _iter_delimited(path: Path, delimiter: str) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="surrogateescape")
    if not text.strip():
        raise DataError(f"{path}: the file is empty; expected a header row and data rows")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise DataError(f"{path}: cannot parse the header: {exc}") from exc
    header = [h.strip() for h in header]

    def rows() -> Iterator[tuple[int, dict[str, Any] | str]]:
        n = 0
        while True:
            n += 1
            try:
                values = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield n, f"unparseable row: {exc}"
                continue
            if not values:
                n -= 1
                continue
            if len(values) != len(header):
                yield n, f"has {len(values)} fields but the header has {len(header)}"
                continue
            yield n, dict(zip(header, values))

    return header, rows()


def _iter_jsonl(path: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    lines = path.read_bytes().splitlines()
    if not any(line.strip() for line in lines):
        raise DataError(f"{path}: the file is empty; expected one JSON object per line")
    columns: list[str] = []
    for line in lines:
        try:
            obj = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(obj, dict):
            columns = list(obj)
            break

    def rows() -> Iterator[tuple[int, dict[str, Any] | str]]:
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line.decode("utf-8"))
            except UnicodeDecodeError as exc:
                yield n, f"undecodable bytes (not UTF-8) at byte {exc.start}"
                continue
            except ValueError as exc:
                yield n, f"invalid JSON: {exc}"
                continue
            if not isinstance(obj, dict):
                yield n, f"expected a JSON object, got {type(obj).__name__}"
                continue
            yield n, obj

    return columns, rows()


def _iter_table(rows: Sequence[dict[str, Any]], columns: list[str]) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    return columns, ((i, dict(r)) for i, r in enumerate(rows, start=1))


def open_rows(source: Any, fmt: str | None) -> tuple[str, list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    """Rows of any supported source, before any column mapping: (name for messages, columns, iterator of
    (row number, row dict or a problem string)). Used by every reader of user files."""
    try:
        import datasets as hf
    except ImportError:  # pragma: no cover - datasets is a dependency
        hf = None
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
    elif kind == "parquet":
        import pandas as pd

        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types
            raise DataError(f"{path}: cannot read Parquet: {exc}") from exc
        if len(df) == 0:
            raise DataError(f"{path}: the file has no rows")
        cols, it = _iter_table(df.to_dict(orient="records"), [str(c) for c in df.columns])
    else:
        if hf is None:  # pragma: no cover
            raise DataError("reading Hugging Face datasets needs the 'datasets' package")
        try:
            ds = hf.load_from_disk(str(path))
        except Exception as exc:  # noqa: BLE001
            raise DataError(f"{path}: not a dataset saved with save_to_disk: {exc}") from exc
        if isinstance(ds, hf.DatasetDict):
            raise DataError(f"{path}: holds several splits ({', '.join(ds)}); pass the folder of one split")
        cols, it = _iter_table(ds, list(ds.column_names))
    return str(path), cols, it


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "to_dict")


def _cell_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


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
    name, columns, rows = open_rows(source, fmt)
    resolved = (schema or Schema()).resolve(columns, task, name)
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
            problem = f"duplicate id {record.id!r} (first seen in row {seen_ids[record.id]})"
            record = None
        if record is None:
            rejects.append(Reject(name, rownum, problem or "invalid row", _jsonable_row(row)))
            continue
        seen_ids[record.id] = rownum
        records.append(record)
    if rows_read == 0:
        raise DataError(f"{name}: no data rows")
    return Dataset(records, rejects, resolved, name, rows_read, extra)


def _row_to_record(row: dict[str, Any], rownum: int, schema: Schema, task: Task, max_chars: int) -> tuple[str | None, Record | None]:
    fields: dict[str, str] = {}
    for role, col in schema.text_cols.items():
        if col not in row:
            return f"missing column {col!r}", None
        value = _cell_text(row[col])
        if value is None or not value.strip():
            return f"empty text in column {col!r}", None
        if _has_undecodable(value):
            return f"undecodable bytes (not UTF-8) in column {col!r}", None
        if len(value) > max_chars:
            return f"text in column {col!r} has {len(value):,} characters, over the limit of {max_chars:,} (--max-chars)", None
        fields[role] = value
    raw_label = row.get(schema.label_col) if schema.label_col else None
    if isinstance(raw_label, str) and _has_undecodable(raw_label):
        return f"undecodable bytes (not UTF-8) in column {schema.label_col!r}", None
    try:
        label = task.label_space.canonical(_cell_text(raw_label))
    except LabelError as exc:
        return f"{exc} in column {schema.label_col!r}", None
    if schema.id_col:
        rid = _cell_text(row.get(schema.id_col))
        if rid is None or not rid.strip():
            return f"empty id in column {schema.id_col!r}", None
        rid = rid.strip()
    else:
        rid = str(rownum)
    used = set(schema.columns())
    meta = {k: v for k, v in row.items() if k not in used and k is not None}
    return None, Record(id=rid, fields=fields, label=label, meta=_jsonable_row(meta))


def _jsonable_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, str) and _has_undecodable(v):
            v = v.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
        elif isinstance(v, float) and math.isnan(v):
            v = None
        elif hasattr(v, "item") and not isinstance(v, (list, dict, str)):
            try:
                v = v.item()
            except (ValueError, AttributeError):
                v = str(v)
        out[str(k)] = v
    return out


# ---------------------------------------------------------------------------------------------- writing


def write_rows(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str], fmt: str | None = None,
               columns: Sequence[str] | None = None) -> None:
    """Write row dicts. JSONL keeps nested objects; CSV/TSV/Parquet/HF store them as JSON strings."""
    kind = detect_format(path, fmt, "--output-format") if fmt or not Path(path).is_dir() else "hf"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(columns) if columns else _union_columns(rows)
    tmp = path.with_name(path.name + ".tmp")
    if kind == "jsonl":
        with open(tmp, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps({c: r.get(c) for c in cols}, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
        return
    flat = [{c: _flat(r.get(c)) for c in cols} for r in rows]
    if kind in ("csv", "tsv"):
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, delimiter="," if kind == "csv" else "\t")
            w.writeheader()
            w.writerows(flat)
        os.replace(tmp, path)
    elif kind == "parquet":
        import pandas as pd

        pd.DataFrame(flat, columns=cols).to_parquet(tmp, index=False)
        os.replace(tmp, path)
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
