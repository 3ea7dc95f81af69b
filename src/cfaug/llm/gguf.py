"""What a GGUF model file says about itself: read from its header, without loading the weights.

A GGUF file starts with ``GGUF``, a version, the tensor count and the count of key/value pairs; the pairs
follow (typed values, arrays included). :func:`read_metadata` reads the pairs it needs (architecture, name,
training context length, chat template, license) and skips the rest, so the tokenizer's vocabulary arrays
are passed over, not decoded.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"

# value types of the GGUF format: code -> struct format (scalars); 8 is a string, 9 an array
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: the longest string value kept (a chat template is a few kilobytes; longer ones are skipped)
_MAX_KEPT = 1 << 20


class GGUFError(ValueError):
    """The file is not a GGUF model file, or its header is damaged."""


@dataclass(frozen=True)
class GGUFInfo:
    """The header facts cfaug uses. ``context_length``: the context the model was trained with (0 when
    the header does not say); ``chat_template``: whether the file carries one (a base model has none,
    and is asked through the completions endpoint)."""

    path: Path
    size: int
    architecture: str
    name: str
    context_length: int
    chat_template: bool
    license: str


def read_metadata(path: str | os.PathLike[str]) -> GGUFInfo:
    """The :class:`GGUFInfo` of the GGUF file at ``path``; :class:`GGUFError` when it is not one."""
    p = Path(path)
    with p.open("rb") as fh:
        if fh.read(4) != MAGIC:
            raise GGUFError(f"{p} is not a GGUF model file (it does not start with 'GGUF')")
        try:
            version, _tensors, count = struct.unpack("<IQQ", _exact(fh, 20))
            if version < 2:
                raise GGUFError(f"{p}: GGUF version {version} is too old (2 or later is read)")
            values: dict[str, Any] = {}
            for _ in range(count):
                key = _string(fh)
                values[key] = _value(fh, struct.unpack("<I", _exact(fh, 4))[0])
        except (struct.error, UnicodeDecodeError, EOFError) as exc:
            raise GGUFError(f"{p}: damaged GGUF header ({exc})") from None
    arch = str(values.get("general.architecture") or "")
    return GGUFInfo(path=p, size=p.stat().st_size, architecture=arch, name=str(values.get("general.name") or ""),
                    context_length=int(values.get(f"{arch}.context_length") or 0),
                    chat_template=bool(values.get("tokenizer.chat_template")),
                    license=str(values.get("general.license") or ""))


def _exact(fh: BinaryIO, n: int) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise EOFError("the header ends early")
    return data


def _string(fh: BinaryIO, keep: bool = True) -> str | None:
    (n,) = struct.unpack("<Q", _exact(fh, 8))
    if not keep or n > _MAX_KEPT:
        fh.seek(n, os.SEEK_CUR)
        return None
    return _exact(fh, n).decode("utf-8")


def _value(fh: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, _exact(fh, struct.calcsize(fmt)))[0]
    if kind == _STRING:
        return _string(fh)
    if kind == _ARRAY:  # skipped: cfaug needs no array (the vocabulary, merges, token types)
        item, n = struct.unpack("<IQ", _exact(fh, 12))
        if item in _SCALARS:
            fh.seek(n * struct.calcsize(_SCALARS[item]), os.SEEK_CUR)
        else:
            for _ in range(n):
                _value_skip(fh, item)
        return None
    raise GGUFError(f"unknown GGUF value type {kind}")


def _value_skip(fh: BinaryIO, kind: int) -> None:
    if kind == _STRING:
        _string(fh, keep=False)
    else:
        _value(fh, kind)


__all__ = ["GGUFError", "GGUFInfo", "read_metadata"]
