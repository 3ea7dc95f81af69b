"""Reading and writing ASTE-Data-V2 files (``sentence####triplets`` per line); the triplets themselves are
parsed and formatted by :mod:`cfaug.data.aste`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cfaug.data.io.errors import DataError
from cfaug.quoting import quote, quote_list


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
        raise DataError(f"{path}: {hint} (no text or label column among {quote_list(cols)})")
    lines = []
    for n, r in enumerate(rows, start=1):
        try:
            label = format_triplets(parse_triplets(r.get(label_col) or "[]"))
        except AsteFormatError:
            tmp.unlink(missing_ok=True)
            raise DataError(f"{path}: row {n} has the label {quote(str(r.get(label_col)), 40)}, not a triplet list; "
                            f"{hint}") from None
        lines.append(f"{' '.join(str(r.get(text_col) or '').split())}{SEPARATOR}{label}\n")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(lines)
