"""What goes wrong when reading: :class:`DataError` for an input that cannot be read as a whole, and
:class:`Reject` for one row that was not used (with its raw content cut short)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from cfaug.data.io.encoding import _clean_nested, _clean_unicode


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
