"""The value every metric returns: a number plus the settings that make it reproducible and comparable."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class MetricResult:
    """One metric over one set of texts.

    ``settings`` names everything the number depends on (model path and weight hash, tokenization,
    smoothing, n-gram order...). Two results are comparable only when their :attr:`signature` is equal.
    ``per_item`` holds the per-text scores where the metric has them (``None`` for an item it could not
    score), in input order. ``details`` holds secondary figures (e.g. precision and recall beside F1).
    """

    name: str
    value: float | None
    n: int
    settings: dict[str, Any] = field(default_factory=dict)
    per_item: list[float | None] | None = None
    details: dict[str, Any] = field(default_factory=dict)
    higher_is_better: bool = True

    @property
    def signature(self) -> str:
        """``name|<12 hex digits>``: a hash of the name and settings (not of the data or the value)."""
        blob = json.dumps({"name": self.name, "settings": self.settings}, sort_keys=True, default=str)
        return f"{self.name}|{hashlib.sha256(blob.encode()).hexdigest()[:12]}"

    def to_json(self, include_items: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "value": _clean(self.value), "n": self.n,
                               "higher_is_better": self.higher_is_better, "signature": self.signature,
                               "settings": self.settings, "details": _clean(self.details)}
        if include_items and self.per_item is not None:
            out["per_item"] = [_clean(v) for v in self.per_item]
        return out


def mean_of(values: list[float | None]) -> float | None:
    """Mean of the non-missing values (``None`` when there are none)."""
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return sum(vals) / len(vals) if vals else None


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item"):
        return _clean(obj.item())
    return obj
