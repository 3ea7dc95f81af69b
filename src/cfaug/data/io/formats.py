"""The formats read and written, and how one is chosen from a flag or a file name."""

from __future__ import annotations

import os
from pathlib import Path

from cfaug.data.io.errors import DataError
from cfaug.quoting import quote

FORMATS = ("csv", "tsv", "jsonl", "parquet", "hf", "aste")


def detect_format(path: str | os.PathLike[str], fmt: str | None = None, flag: str = "--format") -> str:
    """Choose a format from an explicit flag or the file extension (a folder is a HF dataset).
    ``flag`` names the option that sets the format, for the error message."""
    if fmt:
        if fmt not in FORMATS:
            raise DataError(f"unknown format {quote(fmt)}; choose one of {', '.join(FORMATS)}")
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
