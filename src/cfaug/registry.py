"""Registries of named, versioned components (methods, judges, filters, importance methods, proposers,
tasks, engines, LLM backends, metrics).

Names carry a version (``auto-cad.v1``); looking up the bare name (``auto-cad``) gives the newest version,
so a config written today keeps meaning the same thing after ``auto-cad.v2`` lands. In config files a part
is written as a mapping whose ``@<registry>`` key names it and whose other keys are its parameters, e.g.
``{"@judges": "tfidf.v1", "data": "labelled.tsv"}`` (see :func:`spec_name`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cfaug.quoting import quote

T = TypeVar("T")
_VERSIONED = re.compile(r"^(?P<base>[a-z0-9][a-z0-9_-]*)\.v(?P<version>\d+)$")


class RegistryError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0])


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    description: str
    obj: T


class Registry(Generic[T]):
    """A mapping of versioned names to objects, filled with the :meth:`register` decorator."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, description: str) -> Callable[[T], T]:
        if not _VERSIONED.match(name):
            raise ValueError(f"{self.kind} name {name!r} must look like 'name.v1'")

        def deco(obj: T) -> T:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._entries[name] = Entry(name, description, obj)
            return obj

        return deco

    def resolve(self, name: str) -> str:
        """Full versioned name for ``name`` (the newest version when no version is given)."""
        if name in self._entries:
            return name
        versions = [(int(m["version"]), full) for full in self._entries
                    if (m := _VERSIONED.match(full)) and m["base"] == name]
        if not versions:
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.kind} {quote(name)}; known: {known}")
        return max(versions)[1]

    def get(self, name: str) -> T:
        return self._entries[self.resolve(name)].obj

    def entries(self) -> list[Entry[T]]:
        return [self._entries[k] for k in sorted(self._entries)]

    def __contains__(self, name: str) -> bool:
        try:
            self.resolve(name)
        except RegistryError:
            return False
        return True


def spec_name(spec: str | Mapping[str, Any], kind: str) -> tuple[str, dict[str, Any]]:
    """(name, parameters) of a part spec: a bare or versioned name, or a mapping with an ``@<kind>`` key
    naming the part (``{"@judges": "tfidf.v1", "data": "x.tsv"}``). Keys with a value of None are
    dropped, so shorthand options left unset fall back to the part's defaults."""
    if isinstance(spec, str):
        return spec, {}
    if not isinstance(spec, Mapping):
        raise RegistryError(f"a {kind} spec must be a name or a mapping with an '@{kind}' key, got {quote(spec)}")
    key = f"@{kind}"
    if key not in spec:
        raise RegistryError(f"a {kind} spec needs an '@{kind}' key naming the part, got keys {sorted(spec)}")
    params = {k: v for k, v in spec.items() if k != key and v is not None}
    return str(spec[key]), params
