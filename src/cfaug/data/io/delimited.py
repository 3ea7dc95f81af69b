"""Reading CSV and TSV files: quotes parsed strictly, and a stray quote never swallows the rows after it."""

from __future__ import annotations

import csv
import io
import itertools
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cfaug.data.io.errors import DataError

csv.field_size_limit(sys.maxsize)


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
    file.

    Lines end at ``\n`` or ``\r\n``; a carriage return alone is then part of its field, never the end of a
    row (see :func:`_hide_lone_cr`). Only a file without any ``\n`` has its lines end at ``\r``."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="surrogateescape")
    if not text.strip():
        raise DataError(f"{path}: the file is empty; expected a header row and data rows")
    text, cr = _hide_lone_cr(text)

    def whole(value: str) -> str:
        """A value with its lone carriage returns back in place."""
        return value.replace(cr, "\r") if cr else value

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
        return [whole(cell) for cell in lines.lines[start].rstrip("\r\n").split(delimiter)]

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
    header = [whole(h).strip() for h in header_values]

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
                    yield n, dict(zip(header, map(whole, values)))
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


def _hide_lone_cr(text: str) -> tuple[str, str]:
    """``text`` with each carriage return that is not followed by ``\n`` replaced by a character it does not
    hold, and that character ('' when nothing was replaced). Both :mod:`csv` and line splitting end a row at
    a lone ``\r``; in a file whose lines end at ``\n`` (or ``\r\n``), one inside a field would split its row
    in two. A file without any ``\n`` keeps its carriage returns: they end its lines."""
    if "\r" not in text or "\n" not in text or "\r" not in text.replace("\r\n", ""):
        return text, ""
    stand_in = next(chr(c) for c in itertools.chain(range(0xE000, 0xF900), range(0xF0000, 0xFFFFE))
                    if chr(c) not in text)  # a private-use character: a text holding all of them is not plausible
    return re.sub(r"\r(?!\n)", stand_in, text), stand_in


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
