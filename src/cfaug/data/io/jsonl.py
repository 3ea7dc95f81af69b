"""Reading JSONL files: one JSON object per line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cfaug.data.io.errors import DataError


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
