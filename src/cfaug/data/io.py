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
from cfaug.data.schema import Schema, SchemaError
from cfaug.data.tasks import Task

FORMATS = ("csv", "tsv", "jsonl", "parquet", "hf", "aste")
DEFAULT_MAX_CHARS = 100_000

csv.field_size_limit(sys.maxsize)


class DataError(ValueError):
    """The input as a whole cannot be read (missing file, empty file, unknown format, missing column)."""


#: a rejected row's fields longer than this are cut to their first RAW_KEEP_CHARS characters and a marker
#: giving the original length, so that rejects.jsonl never copies a megabyte text (or object) whole
RAW_MAX_CHARS = 500
RAW_KEEP_CHARS = 300
RAW_MAX_FIELDS = 100


@dataclass
class Reject:
    """A row that was not used, with where it came from and why. ``raw`` is the row as read, with every
    long field cut short (see :data:`RAW_MAX_CHARS`); cutting is idempotent, so copying a reject is safe."""

    source: str
    row: int
    problem: str
    raw: dict[str, Any] | str | None = None

    def __post_init__(self) -> None:
        # rejects.jsonl is written as UTF-8: undecodable bytes and lone surrogates become U+FFFD
        if isinstance(self.source, str):
            self.source = _clean_unicode(self.source)
        if isinstance(self.problem, str):
            self.problem = _clip(_clean_unicode(self.problem))
        if isinstance(self.raw, str):
            self.raw = _clip(_clean_unicode(self.raw))
        elif isinstance(self.raw, dict):
            self.raw = _clip_row(_clean_nested(self.raw))

    def message(self) -> str:
        return f"{self.source}, row {self.row}: {self.problem}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _clip(text: str) -> str:
    if len(text) <= RAW_MAX_CHARS:
        return text
    return f"{text[:RAW_KEEP_CHARS]}… [truncated: {len(text):,} characters in all]"


def _clip_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, (k, v) in enumerate(row.items()):
        if i == RAW_MAX_FIELDS:
            out["…"] = f"[truncated: {len(row):,} fields in all]"
            break
        if isinstance(v, str):
            v = _clip(v)
        elif isinstance(v, (dict, list, tuple)):
            try:
                text = json.dumps(v, ensure_ascii=False, default=str)
            except (TypeError, ValueError):  # pragma: no cover - circular structures
                text = str(v)
            if len(text) > RAW_MAX_CHARS:
                v = _clip(text)
        out[_clip(str(k))] = v
    return out


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
        if s == "txt":  # ASTE-Data-V2 lines; an existing .txt file of anything else stays unknown
            if p.is_file() and not _looks_like_aste(p):
                break
            return "aste"
    raise DataError(f"{path}: cannot tell the format from the name; pass {flag} ({', '.join(FORMATS)})")


def _looks_like_aste(path: Path) -> bool:
    """Whether the first non-blank line of ``path`` is ``sentence####triplets``."""
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                return b"####" in line
    return False


# ---------------------------------------------------------------------------------------------- reading


def _has_undecodable(value: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in value)


def _unicode_problem(value: str, col: str) -> str | None:
    """Why ``value`` cannot be written as UTF-8, or None. Undecodable input bytes reach here as the
    surrogates of ``surrogateescape``; a JSON escape such as ``"\\ud800"`` gives a lone surrogate."""
    if not any("\ud800" <= ch <= "\udfff" for ch in value):
        return None
    if _has_undecodable(value):
        return f"undecodable bytes (not UTF-8) in column {col!r}"
    return f"a lone surrogate (not valid Unicode) in column {col!r}"


def _clean_unicode(value: str) -> str:
    """``value`` with undecodable bytes and lone surrogates replaced by U+FFFD, safe to write as UTF-8."""
    if not any("\ud800" <= ch <= "\udfff" for ch in value):
        return value
    value = "".join("\ufffd" if "\ud800" <= ch < "\udc80" or "\udcff" < ch <= "\udfff" else ch for ch in value)
    return value.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _clean_nested(value: Any) -> Any:
    """:func:`_clean_unicode` applied to every string (and key) inside dicts and lists."""
    if isinstance(value, str):
        return _clean_unicode(value)
    if isinstance(value, dict):
        return {_clean_unicode(str(k)) if isinstance(k, str) else k: _clean_nested(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_nested(v) for v in value]
    return value


class _Lines:
    """The physical lines of a text, handed one at a time to :func:`csv.reader`; ``pos`` says how many were
    taken and can be set back, so that a row whose quotes ran over later lines can be re-read."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.pos = 0

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        if self.pos >= len(self.lines):
            raise StopIteration
        self.pos += 1
        return self.lines[self.pos - 1]


def _iter_delimited(path: Path, delimiter: str) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    """Rows of a CSV or TSV file. Quotes are parsed (a quoted field may hold the delimiter, a newline or a
    doubled quote), strictly: a field that opens with a quote must close with one followed by the delimiter
    or the end of the line. A row that breaks this rule (a stray opening quote) is never allowed to swallow
    the rows after it: only its own line is taken, and reading goes on at the next line. The same holds for
    a quoted field that does close, lines later, on another stray quote, when every line it spans looks like
    a row of the file (see :func:`_swallowed_rows`). In a TSV file the line taken alone is then split on
    tabs with its quotes kept as text (TSV corpora are commonly written without quoting, and a tab cannot be
    part of a text on one line, so the split is unambiguous); in a CSV file, where texts hold commas, the
    row is rejected, naming its line. Either way rows read + rows rejected is the number of rows in the
    file."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="surrogateescape")
    if not text.strip():
        raise DataError(f"{path}: the file is empty; expected a header row and data rows")
    lines = _Lines(list(io.StringIO(text, newline="")))  # splits at \n, \r\n and \r only, like csv
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    tsv = delimiter == "\t"

    def record() -> tuple[int, list[str] | None, str | None, bool] | None:
        """The next record: (index of its first line, values or None, csv's complaint, spans several lines)."""
        start = lines.pos
        try:
            values: list[str] | None = next(reader)
            error = None
        except StopIteration:
            return None
        except csv.Error as exc:
            values, error = None, str(exc)
        return start, values, error, lines.pos - start > 1

    def literal(start: int) -> list[str]:
        return lines.lines[start].rstrip("\r\n").split(delimiter)

    def quote_problem(start: int, values: list[str] | None, error: str | None, width: int) -> str:
        """What is wrong with a record whose quotes do not close properly, starting at line ``start + 1``."""
        line = start + 1
        if error and "unexpected end of data" in error:
            how = "is never closed before the end of the file"
        elif error:
            how = f"does not close where its field ends ({error})"
        elif values is not None and len(values) == width:
            how = "runs on over the next lines, which look like rows of their own"
        else:
            how = f"runs on over the next lines and gives {len(values or [])} fields instead of {width}"
        if line < len(lines.lines):
            how += f"; only line {line} was skipped, reading went on at line {line + 1}"
        return f"unmatched quote on line {line}: the quoted field {how}"

    while True:
        first = record()
        if first is None:
            raise DataError(f"{path}: the file is empty; expected a header row and data rows")
        if first[1] != []:
            break
    start, header_values, error, spans = first
    if header_values is None or spans:
        if not tsv:
            raise DataError(f"{path}: cannot parse the header (line {start + 1}): "
                            f"{error or 'a quoted name runs over several lines'}")
        lines.pos = start + 1
        header_values = literal(start)
    header = [h.strip() for h in header_values]

    # the values of the file's first rows that fit on one line, to tell its categorical columns
    seen = _ColumnValues(len(header))
    sample = _Lines(lines.lines[lines.pos:lines.pos + 2000])
    sampler = csv.reader(sample, delimiter=delimiter, strict=True)
    while seen.rows < 1000:
        start = sample.pos
        try:
            cells = next(sampler)
        except StopIteration:
            break
        except csv.Error:
            sample.pos = start + 1
            continue
        if sample.pos - start == 1 and len(cells) == len(header):
            seen.add(cells)
    seen.freeze()

    def rows() -> Iterator[tuple[int, dict[str, Any] | str]]:
        n = 0
        while True:
            got = record()
            if got is None:
                return
            start, values, error, spans = got
            if values == []:
                continue  # a blank line
            n += 1
            if values is not None and len(values) == len(header):
                if not spans or not _swallowed_rows(lines.lines[start:lines.pos], delimiter, seen):
                    yield n, dict(zip(header, values))
                    continue
            if values is not None and not spans:
                yield n, f"has {len(values)} fields but the header has {len(header)}"
                continue
            # a quote that does not close properly: take this line alone, never the lines after it
            lines.pos = start + 1
            if tsv:
                cells = literal(start)
                if len(cells) == len(header):
                    yield n, dict(zip(header, cells))
                    continue
            yield n, quote_problem(start, values, error, len(header))

    return header, rows()


class _ColumnValues:
    """How often each value occurs in each column among the first lines of a CSV/TSV file that are rows on
    their own, to recognise the categorical columns (a label, a split: most rows hold one of a few repeated
    values) and so a line that is a row of the file. Values seen once (ids, texts, stray lines of a
    multi-line text that happen to split into as many cells as the header) never count as known."""

    MAX_VALUES = 200

    def __init__(self, width: int) -> None:
        self.rows = 0
        self.counts: list[dict[str, int] | None] = [{} for _ in range(width)]
        self.known: dict[int, set[str]] = {}

    def add(self, values: list[str]) -> None:
        self.rows += 1
        for i, v in enumerate(values):
            counts = self.counts[i]
            if counts is not None:
                v = v.strip()
                counts[v] = counts.get(v, 0) + 1
                if len(counts) > self.MAX_VALUES:
                    self.counts[i] = None

    def freeze(self) -> None:
        """Fix the categorical columns and their known values (at least 4 rows, 80% of them repeated values)."""
        self.known = {}
        if self.rows < 4:
            return
        for i, counts in enumerate(self.counts):
            if counts is None:
                continue
            repeated = {v for v, c in counts.items() if c >= 2 and v}
            if repeated and sum(counts[v] for v in repeated) >= 0.8 * self.rows:
                self.known[i] = repeated

    def looks_like_row(self, cells: list[str]) -> bool:
        """Whether ``cells`` (a line split on the delimiter) could be a row: as many cells as the header, and
        a known value in every categorical column (there must be one)."""
        if len(cells) != len(self.counts) or not self.known:
            return False
        return all(cells[i].strip().strip('"') in known for i, known in self.known.items())


def _swallowed_rows(span: list[str], delimiter: str, seen: _ColumnValues) -> bool:
    """Whether a record that spans the physical lines ``span`` is rows of the file swallowed by a quoted
    field: a stray opening quote closed, lines later, by another stray quote that happens to end a field.
    Then every (non-blank) line it spans is a row of its own: split on the delimiter it gives as many cells
    as the header, with known values in the categorical columns (see :meth:`_ColumnValues.looks_like_row`).
    The lines of a genuine multi-line text are very unlikely to all look like that. Files too short to tell
    a categorical column (fewer than 4 rows on one line) are not checked."""
    body = [line.rstrip("\r\n") for line in span if line.strip()]
    return len(body) >= 2 and all(seen.looks_like_row(line.split(delimiter)) for line in body)


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


def _iter_aste(path: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    """Rows of an ASTE-Data-V2 file (``sentence####triplets`` per line, see :mod:`cfaug.data.aste`): columns
    ``text`` and ``label``; the label is checked by the ``aste`` task, a line without ``####`` is a problem."""
    from cfaug.data.aste import SEPARATOR

    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        raise DataError(f"{path}: the file is empty; expected lines 'sentence{SEPARATOR}[(aspect, opinion, polarity), ...]'")

    def rows() -> Iterator[tuple[int, dict[str, Any] | str]]:
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if SEPARATOR not in line:
                yield n, f"no {SEPARATOR!r} between the sentence and its triplets (ASTE-Data-V2 lines)"
                continue
            sentence, label = line.rsplit(SEPARATOR, 1)
            yield n, {"text": " ".join(sentence.split()), "label": label.strip()}

    return ["text", "label"], rows()


def _iter_table(rows: Sequence[dict[str, Any]], columns: list[str]) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    return columns, ((i, dict(r)) for i, r in enumerate(rows, start=1))


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
        import pandas as pd

        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises many types
            raise DataError(f"{path}: cannot read Parquet: {exc}") from exc
        if len(df) == 0:
            raise DataError(f"{path}: the file has no rows")
        cols, it = _iter_table(df.to_dict(orient="records"), [str(c) for c in df.columns])
    else:
        try:
            import datasets as hf
        except ImportError:  # pragma: no cover - datasets is a dependency
            raise DataError("reading Hugging Face datasets needs the 'datasets' package") from None
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
    if value is None or type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing values
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


def _kind(value: Any) -> str | None:
    """How to name a cell that is not text (a JSON object, a number, ...), or None for a string or a missing
    value. Text columns must hold strings; ids and labels may also be numbers."""
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, (list, tuple)):
        return "a JSON array"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true/false"
    if isinstance(value, (int, float)) or type(value).__module__ == "numpy" and hasattr(value, "item"):
        if hasattr(value, "shape") and getattr(value, "shape", ()) != ():
            return "an array"
        return "a number"
    return f"a {type(value).__name__}"


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


def _number(value: str) -> str | None:
    """The integer spelling of a numeric label value (``"1.0"`` -> ``"1"``), or None for a non-number."""
    try:
        f = float(value)
    except ValueError:
        return None
    if f != f or f in (float("inf"), float("-inf")):
        return None
    return str(int(f)) if f.is_integer() else repr(f)


def _check_numeric_labels(rows: Sequence[tuple[int, dict[str, Any] | str]], schema: Schema, task: Task,
                          where: str) -> None:
    """Numbers are read as labels only when the label column's numbers are exactly one of the task's known
    numeric codings (``0/1`` or ``-1/1`` for sentiment, ``0/1/2`` for NLI); a column of star counts or scores
    stops the run rather than have its ``1`` read as positive."""
    codings = task.label_space.numeric_codings
    if not codings or schema.label_col is None:
        return
    numbers: set[str] = set()
    for _, row in rows:
        if isinstance(row, str):
            continue
        text = _cell_text(row.get(schema.label_col))
        if text is not None and text.strip():
            n = _number(text.strip())
            if n is not None:
                numbers.add(n)
    if not numbers or any(numbers <= set(c) for c in codings):
        return
    seen = ", ".join(sorted(numbers, key=float)[:12]) + (", ..." if len(numbers) > 12 else "")
    known = " or ".join("/".join(c) for c in codings)
    how = ("it was found by its name; pass --label-col COLUMN for the column that holds the labels, or "
           if schema.label_guessed else "pass ")
    raise SchemaError(
        f"{where}: the label column {schema.label_col!r} holds the numbers {seen}, which are not a {task.name} "
        f"coding ({known}); {how}--label-map VALUE=LABEL,... to say what each value means (for example "
        f"--label-map {_example_map(sorted(numbers, key=float), task)}), or choose another --task (e.g. rating)")


def _example_map(numbers: list[str], task: Task) -> str:
    labels = list(task.label_space.labels)
    if len(labels) < 2 or not numbers:
        return "VALUE=LABEL"
    lo, hi = numbers[0], numbers[-1]
    return f"{lo}={labels[0]},{hi}={labels[-1]}"


def _row_to_record(row: dict[str, Any], rownum: int, schema: Schema, task: Task, max_chars: int) -> tuple[str | None, Record | None]:
    fields: dict[str, str] = {}
    for role, col in schema.text_cols.items():
        if col not in row:
            return f"missing column {col!r}", None
        value = _cell_text(row[col])
        if value is None or not value.strip():
            return f"empty text in column {col!r}", None
        kind = _kind(row[col])
        if kind is not None:
            return f"text in column {col!r} is {kind}, not a string", None
        problem = _unicode_problem(value, col)
        if problem:
            return problem, None
        if len(value) > max_chars:
            return f"text in column {col!r} has {len(value):,} characters, over the limit of {max_chars:,} (--max-chars)", None
        fields[role] = value
    raw_label = row.get(schema.label_col) if schema.label_col else None
    kind = _kind(raw_label)
    if kind not in (None, "a number", "true/false"):
        return f"label in column {schema.label_col!r} is {kind}, not a string or number", None
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
                return (f"label {raw_text!r} in column {schema.label_col!r} is not in --label-map "
                        f"({', '.join(schema.label_map)})"), None
            label = task.label_space.canonical(mapped)
        else:
            label = task.label_space.canonical(_cell_text(raw_label))
    except LabelError as exc:
        return f"{exc} in column {schema.label_col!r}", None
    if schema.id_col:
        raw_id = row.get(schema.id_col)
        kind = _kind(raw_id)
        if kind not in (None, "a number"):
            return f"id in column {schema.id_col!r} is {kind}, not a string or number", None
        rid = _cell_text(raw_id)
        if rid is None or not rid.strip():
            return f"empty id in column {schema.id_col!r}", None
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
        return f"{problem} (column {schema.label_col!r})", None
    return None, record


def _jsonable_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, (str, dict, list)):
            v = _clean_nested(v)
        elif isinstance(v, float) and math.isnan(v):
            v = None
        elif hasattr(v, "item") and not isinstance(v, (list, dict, str)):
            try:
                v = v.item()
            except (ValueError, AttributeError):
                v = str(v)
        out[_clean_unicode(str(k))] = v
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
    if kind == "aste":
        _write_aste_rows(rows, tmp, cols, path)
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


def _write_aste_rows(rows: Sequence[dict[str, Any]], tmp: Path, cols: Sequence[str], path: Path) -> None:
    """ASTE-Data-V2 lines from rows (written to ``tmp``, named ``path`` in errors): the text is the first column
    named like a text column (``text``, ``sentence``...), the triplets the ``label`` column (or the first
    label-like column); other columns are dropped, as the format has no room for them (write JSONL to keep
    them). Rows whose label is not a triplet list stop the writing: a ``.txt`` output of other data needs
    ``--output-format``."""
    from cfaug.data.aste import SEPARATOR, AsteFormatError, format_triplets, parse_triplets
    from cfaug.data.schema import LABEL_NAMES, TEXT_NAMES

    hint = "a .txt output is written as ASTE-Data-V2 lines; pass --output-format (csv, tsv, jsonl...) for other data"
    text_col = next((c for c in TEXT_NAMES if c in cols), cols[0] if cols else None)
    label_col = next((c for c in LABEL_NAMES if c in cols), None)
    if text_col is None or label_col is None:
        raise DataError(f"{path}: {hint} (no text or label column among {', '.join(cols) or 'none'})")
    lines = []
    for n, r in enumerate(rows, start=1):
        try:
            label = format_triplets(parse_triplets(r.get(label_col) or "[]"))
        except AsteFormatError:
            tmp.unlink(missing_ok=True)
            raise DataError(f"{path}: row {n} has the label {str(r.get(label_col))[:40]!r}, not a triplet list; "
                            f"{hint}") from None
        lines.append(f"{' '.join(str(r.get(text_col) or '').split())}{SEPARATOR}{label}\n")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(lines)


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
