"""What a judge scores, and the judge protocols.

A :class:`Candidate` is a proposed rewrite: the record's original fields, the new fields, the target label
and the edited role. A judge scores a batch of candidates with ``score(batch) -> array`` (higher is more
of what the judge measures: probability of the target label, similarity to the original, fluency). Label
judges also expose ``labels`` and ``predict_proba(inputs)``. The same judge serves as a generation
objective, a filter and an evaluation metric; evaluation builds an independent instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cfaug.data.inputs import JudgeInput


@dataclass
class Candidate:
    """A proposed rewrite of one record. ``scores`` collects what judges said about it (by score name),
    so a filter reuses a score computed during generation instead of computing it again."""

    original: dict[str, str]
    fields: dict[str, str]
    target: str
    role: str = "text"
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def old_text(self) -> str:
        return self.original[self.role]

    @property
    def new_text(self) -> str:
        return self.fields[self.role]

    def judge_input(self, roles: Sequence[str]) -> JudgeInput:
        """What a label judge reads: the single text, or the (premise, hypothesis) pair."""
        return self.fields[roles[0]] if len(roles) == 1 else (self.fields[roles[0]], self.fields[roles[1]])


@runtime_checkable
class Judge(Protocol):
    """Scores candidates in batches."""

    name: str

    def score(self, batch: Sequence[Candidate]) -> np.ndarray: ...

    def describe(self) -> dict[str, Any]: ...


@runtime_checkable
class LabelJudge(Protocol):
    """A classifier: probabilities of each label, columns in the order of ``labels``."""

    name: str
    labels: tuple[str, ...]

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray: ...

    def describe(self) -> dict[str, Any]: ...


def predict_labels(judge: LabelJudge, inputs: Sequence[JudgeInput]) -> list[str]:
    """The most probable label of each input."""
    probs = judge.predict_proba(inputs)
    return [judge.labels[i] for i in probs.argmax(axis=1)]


def target_probability(judge: LabelJudge, batch: Sequence[Candidate], roles: Sequence[str]) -> np.ndarray:
    """P(target label) of each candidate under a label judge (0 where the judge lacks the label)."""
    if not batch:
        return np.zeros(0)
    probs = judge.predict_proba([c.judge_input(roles) for c in batch])
    cols = {lab: i for i, lab in enumerate(judge.labels)}
    return np.array([probs[k, cols[c.target]] if c.target in cols else 0.0 for k, c in enumerate(batch)])
