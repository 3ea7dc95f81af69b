"""The two objects every part of cfaug passes around: :class:`Record` and :class:`Counterfactual`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Record:
    """One input example.

    ``fields`` maps a *role* to its text: ``{"text": ...}`` for single-text tasks, ``{"premise": ...,
    "hypothesis": ...}`` for NLI. Roles are fixed by the :class:`~cfaug.data.tasks.Task`; the column
    names of the user's file live in :class:`~cfaug.data.schema.Schema`, so methods never see them.
    ``label`` is the canonical label (see :mod:`cfaug.data.labels`), or ``None`` where unknown.
    ``meta`` holds the row's other columns, untouched.
    """

    id: str
    fields: dict[str, str]
    label: str | None
    meta: dict[str, Any] = field(default_factory=dict)

    def text(self, role: str = "text") -> str:
        """The text of one field (default: the single text of a sentiment record)."""
        return self.fields[role]


@dataclass
class Counterfactual:
    """A rewrite of ``source`` that should carry ``target`` as its label.

    ``fields`` holds the full set of fields after editing (untouched fields are copied), ``method`` the
    registered method name that made it, ``meta`` its provenance: edited spans, scores seen, iterations,
    LLM usage, filter results. ``meta["passed"]`` is False when a filter rejected the candidate; runners
    write only passing candidates to the output unless asked otherwise.
    """

    source: Record
    fields: dict[str, str]
    target: str
    method: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.meta.get("passed", True))


class NoCounterfactual(list):  # type: ignore[type-arg]
    """What a method returns for an item it has nothing to rewrite in: an empty list of counterfactuals
    that says why (``reason``), so that the run records the reason instead of a bare "no counterfactual"."""

    def __init__(self, reason: str, details: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.reason = reason
        #: what led to the reason, for the run directory (an LLM's unreadable answers, say)
        self.details = details

    def __reduce__(self) -> tuple[Any, ...]:  # engines send results between processes
        return (NoCounterfactual, (self.reason, self.details))


@dataclass(frozen=True)
class WorkItem:
    """One unit of work for a method: a record and the label it should be rewritten towards. ``draw``: how
    often its answers were drawn before and held nothing readable (``--retry-failed`` draws again, with new
    seeds; 0 for a first run)."""

    record: Record
    target: str
    draw: int = 0

    @property
    def key(self) -> str:
        """Stable identity used by the run directory for resuming (record id + target)."""
        return f"{self.record.id}\u241f{self.target}"
