"""The filter protocol, its registry, and how verdicts are written into a counterfactual's ``meta``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cfaug.config import build_config
from cfaug.judges.base import Candidate
from cfaug.registry import Registry, spec_name


class Filter(Protocol):
    """``check(batch)`` gives one verdict per candidate (True: keep). ``name`` is the key in
    ``meta["filters"]``."""

    name: str

    def check(self, batch: Sequence[Candidate]) -> list[bool]: ...


@dataclass(frozen=True)
class FilterFactory:
    Config: type
    build: Callable[[Any, Any], Filter]


FILTERS: Registry[FilterFactory] = Registry("filter")


def register_filter(name: str, description: str, config: type) -> Callable[[Callable[..., Filter]], Callable[..., Filter]]:
    """Decorator registering ``build(config, judge_ctx) -> Filter`` under ``name``."""

    def deco(fn: Callable[..., Filter]) -> Callable[..., Filter]:
        FILTERS.register(name, description)(FilterFactory(config, fn))
        return fn

    return deco


def build_filter(spec: str | Mapping[str, Any], ctx: Any = None) -> Filter:
    """The filter described by ``spec``; ``ctx`` is a :class:`~cfaug.judges.registry.JudgeContext` for
    filters that build a judge (similarity)."""
    import cfaug.filters.builtin  # noqa: F401  (registers the built-in filters)

    name, params = spec_name(spec, "filters")
    factory = FILTERS.get(name)
    return factory.build(build_config(factory.Config, params, owner=FILTERS.resolve(name)), ctx)


def apply_filters(batch: Sequence[Candidate], filters: Sequence[Filter]) -> list[dict[str, bool | None]]:
    """Run ``filters`` in order over ``batch``; a candidate that failed one gets None from the later
    ones. Returns each candidate's verdicts by filter name."""
    verdicts: list[dict[str, bool | None]] = [{} for _ in batch]
    for f in filters:
        alive = [i for i, v in enumerate(verdicts) if all(x is not False for x in v.values())]
        results = f.check([batch[i] for i in alive]) if alive else []
        for i in range(len(batch)):
            verdicts[i][f.name] = None
        for i, ok in zip(alive, results):
            verdicts[i][f.name] = bool(ok)
    return verdicts


def record_filters(meta: dict[str, Any], verdicts: Mapping[str, bool | None], notes: Mapping[str, str] | None = None) -> None:
    """Write ``meta["filters"]`` and ``meta["passed"]`` (and, when given, ``meta["filter_notes"]``: why a
    filter failed, in words)."""
    meta["filters"] = dict(verdicts)
    meta["passed"] = all(v is not False for v in verdicts.values())
    if notes:
        meta["filter_notes"] = dict(notes)
