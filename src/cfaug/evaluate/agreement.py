"""Agreement between annotators on nominal labels: Cohen's kappa, Fleiss' kappa, Krippendorff's alpha.

The input of each is a set of *units* (items): ``{item: {annotator: label}}``; an annotator who did not
label an item is simply absent from it (missing data). Labels are any hashable values.

- :func:`cohen_kappa`: two annotators, on the items both labelled (Cohen 1960):
  ``(p_o - p_e) / (1 - p_e)`` with ``p_e`` from each annotator's own label distribution.
- :func:`fleiss_kappa`: any number of annotators (Fleiss 1971), on the items labelled by at least two;
  with the same number of labels per item this is Fleiss' formula exactly. With varying numbers the
  per-item agreement uses that item's own count ``n_i`` and the label proportions are pooled over all
  labels given. :func:`fleiss_kappa_counts` takes the usual item x category count table.
- :func:`krippendorff_alpha`: any number of annotators, missing data allowed, nominal metric
  (Krippendorff, *Computing Krippendorff's Alpha-Reliability*, 2011): ``1 - D_o / D_e`` from the
  coincidence matrix of the pairable values (items with at least two labels).
- :func:`agreement`: all of the above for a set of units, as the review statistics report them.

Each returns None when the coefficient is undefined: fewer than two pairable labels, or every label the
same (expected disagreement 0, so agreement beyond chance cannot be measured).

>>> round(cohen_kappa({1: {"a": "y", "b": "y"}, 2: {"a": "n", "b": "n"}, 3: {"a": "y", "b": "n"},
...                    4: {"a": "n", "b": "n"}}, "a", "b"), 3)
0.5
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

Units = Mapping[Hashable, Mapping[str, Hashable]]


def cohen_kappa(units: Units, first: str, second: str) -> float | None:
    """Cohen's kappa of annotators ``first`` and ``second`` on the items both labelled."""
    pairs = [(u[first], u[second]) for u in units.values() if first in u and second in u]
    if not pairs:
        return None
    n = len(pairs)
    p_o = sum(a == b for a, b in pairs) / n
    ca, cb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    p_e = sum(ca[k] * cb.get(k, 0) for k in ca) / (n * n)
    if p_e == 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def fleiss_kappa_counts(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from a count table: one row per item, one column per category, each cell the number
    of annotators who put that item in that category. Rows with fewer than two labels are left out."""
    rows = [list(r) for r in table if sum(r) >= 2]
    if not rows:
        return None
    width = {len(r) for r in rows}
    if len(width) != 1:
        raise ValueError(f"every row of a Fleiss count table needs the same number of categories; got {sorted(width)}")
    if any(c < 0 for r in rows for c in r):
        raise ValueError("counts in a Fleiss count table cannot be negative")
    total = sum(sum(r) for r in rows)
    p_j = [sum(r[j] for r in rows) / total for j in range(len(rows[0]))]
    p_bar = sum((sum(c * c for c in r) - sum(r)) / (sum(r) * (sum(r) - 1)) for r in rows) / len(rows)
    p_e = sum(p * p for p in p_j)
    if p_e == 1.0:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def fleiss_kappa(units: Units) -> float | None:
    """Fleiss' kappa on the items with at least two labels (see the module docstring for varying counts)."""
    categories = sorted({v for u in units.values() for v in u.values()}, key=repr)
    index = {c: j for j, c in enumerate(categories)}
    table = []
    for u in units.values():
        row = [0] * len(categories)
        for v in u.values():
            row[index[v]] += 1
        table.append(row)
    return fleiss_kappa_counts(table)


def krippendorff_alpha(units: Units) -> float | None:
    """Krippendorff's alpha for nominal labels, missing data allowed (units with one label are left out)."""
    coincidence: Counter[tuple[Hashable, Hashable]] = Counter()
    for u in units.values():
        values = list(u.values())
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_k - 1) if c == k else n_c * n_k
                if pairs:
                    coincidence[(c, k)] += pairs / (m - 1)
    n = sum(coincidence.values())
    if n < 2:
        return None
    n_c: Counter[Hashable] = Counter()
    for (c, _), v in coincidence.items():
        n_c[c] += v
    d_o = sum(v for (c, k), v in coincidence.items() if c != k) / n
    d_e = (n * n - sum(v * v for v in n_c.values())) / (n * (n - 1))
    if d_e == 0:
        return None
    return 1.0 - d_o / d_e


@dataclass
class Agreement:
    """Agreement of the annotators of a set of units.

    ``shared``: items labelled by at least two annotators (the items agreement is computed on);
    ``cohen``: Cohen's kappa when there are exactly two annotators; ``pairwise``: Cohen's kappa and the
    number of shared items for each pair of annotators; ``fleiss`` and ``alpha``: Fleiss' kappa and
    Krippendorff's alpha over all annotators; ``observed``: the share of pairs of labels on one item that
    agree."""

    annotators: list[str]
    shared: int
    observed: float | None
    cohen: float | None = None
    fleiss: float | None = None
    alpha: float | None = None
    pairwise: dict[tuple[str, str], tuple[int, float | None]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (pairs as ``"a|b"``)."""
        return {"annotators": self.annotators, "shared_items": self.shared, "observed": self.observed,
                "cohen_kappa": self.cohen, "fleiss_kappa": self.fleiss, "krippendorff_alpha": self.alpha,
                "pairwise": {f"{a}|{b}": {"items": n, "cohen_kappa": k} for (a, b), (n, k) in self.pairwise.items()}}


def agreement(units: Units) -> Agreement:
    """Every coefficient above for ``units``, on the items at least two annotators labelled."""
    shared = {item: u for item, u in units.items() if len(u) >= 2}
    annotators = sorted({a for u in shared.values() for a in u})
    agree = total = 0
    for u in shared.values():
        for a, b in combinations(list(u.values()), 2):
            total += 1
            agree += a == b
    pairwise = {}
    for a, b in combinations(annotators, 2):
        n = sum(1 for u in shared.values() if a in u and b in u)
        if n:
            pairwise[(a, b)] = (n, cohen_kappa(shared, a, b))
    return Agreement(annotators=annotators, shared=len(shared), observed=agree / total if total else None,
                     cohen=cohen_kappa(shared, *annotators) if len(annotators) == 2 else None,
                     fleiss=fleiss_kappa(shared) if shared else None,
                     alpha=krippendorff_alpha(shared) if shared else None, pairwise=pairwise)
