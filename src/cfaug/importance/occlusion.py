"""Occlusion importance over sampled contexts (Eq. 1 of the auto-CAD paper)::

    phi(p) = E_beta[(l(s_beta) - l(s_beta \\ p)) / l(s_beta)]

``l`` is the classifier's probability of the unit's label, ``s_beta`` a context holding the span ``p``
(the full sentence and sampled sub-sequences of it), ``s_beta \\ p`` the same context without the span.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cfaug.config import build_config
from cfaug.registry import Registry, spec_name

Predict = Callable[[Sequence[str]], np.ndarray]


@dataclass
class Unit:
    """One span to score: ``contexts`` are (with the span, without it) text pairs, ``column`` the
    classifier column of the label whose support is measured."""

    contexts: list[tuple[str, str]]
    column: int
    importance: float = field(default=0.0)


@dataclass
class OcclusionConfig:
    """(no parameters: contexts are built by the caller)"""


class OcclusionImportance:
    """Eq. 1, batched: every context of every unit is scored in one classifier call."""

    name = "occlusion"

    def score(self, units: Sequence[Unit], predict_proba: Predict) -> list[float]:
        texts: dict[str, int] = {}
        for u in units:
            for a, b in u.contexts:
                texts.setdefault(a, len(texts))
                texts.setdefault(b, len(texts))
        if not texts:
            return [0.0 for _ in units]
        probs = predict_proba(list(texts))
        out = []
        for u in units:
            vals = [(probs[texts[a], u.column] - probs[texts[b], u.column]) / max(probs[texts[a], u.column], 1e-6)
                    for a, b in u.contexts]
            u.importance = float(np.mean(vals)) if vals else 0.0
            out.append(u.importance)
        return out


IMPORTANCE: Registry[tuple[type, Callable[[Any], Any]]] = Registry("importance")
IMPORTANCE.register("occlusion.v1", "Eq. 1: expected relative drop of the label probability when the span is "
                    "masked, over sampled contexts")((OcclusionConfig, lambda cfg: OcclusionImportance()))


def build_importance(spec: str | Mapping[str, Any] = "occlusion") -> Any:
    """The importance method described by ``spec`` (a name or ``{"@importance": name, ...}``)."""
    name, params = spec_name(spec, "importance")
    config_cls, build = IMPORTANCE.get(name)
    return build(build_config(config_cls, params, owner=IMPORTANCE.resolve(name)))
