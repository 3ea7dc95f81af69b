"""Minimality: how little a counterfactual changes its original.

* ``edit_rate``: token-level Levenshtein distance divided by the original's token count, over
  lower-cased word and punctuation tokens (:func:`cfaug.judges.similarity.tokenize`). 0 = unchanged;
  can exceed 1 when the rewrite is longer than the original.
* ``mover_distance``: a MoverScore-like earth mover's distance between the two texts' contextual token
  vectors (a local encoder must be given). Each text is a uniform distribution over its tokens (special
  tokens dropped), the cost of moving mass is the Euclidean distance between L2-normalised vectors (0 to
  2), and the transport problem is solved exactly. ``details["similarity"]`` is ``1 - distance``. No idf
  weighting and no n-gram pooling, so values are not those of the ``moverscore`` package.

>>> from cfaug.evaluate.minimality import edit_rate
>>> edit_rate(["the film is good ."], ["the film is bad ."]).value
0.2
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cfaug.evaluate.result import MetricResult, mean_of
from cfaug.evaluate.token_embeddings import TokenEncoder
from cfaug.judges.similarity import token_edit_rate


def edit_rate(originals: Sequence[str], counterfactuals: Sequence[str]) -> MetricResult:
    """Mean token edit rate (lower = more minimal)."""
    if len(originals) != len(counterfactuals):
        raise ValueError(f"got {len(originals)} originals but {len(counterfactuals)} counterfactuals")
    rates = [token_edit_rate(o, c) for o, c in zip(originals, counterfactuals)]
    settings = {"tokenization": "lower-cased words and punctuation (regex \\w+(?:'\\w+)?|[^\\w\\s])",
                "distance": "Levenshtein over tokens, unit costs", "normaliser": "original token count"}
    return MetricResult("edit_rate", mean_of(list(rates)), len(rates), settings, per_item=list(rates),
                        higher_is_better=False)


def earth_movers_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Exact EMD between uniform distributions over the rows of ``x`` and of ``y`` with Euclidean cost."""
    if len(x) == 0 or len(y) == 0:
        return float("nan")
    cost = np.sqrt(np.maximum(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), 0.0))
    n, m = cost.shape
    if n == m:
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(cost)
        return float(cost[rows, cols].mean())
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, vstack

    idx = np.arange(n * m)
    row_sums = coo_matrix((np.ones(n * m), (idx // m, idx)), shape=(n, n * m))
    col_sums = coo_matrix((np.ones(n * m), (idx % m, idx)), shape=(m, n * m))
    a_eq = vstack([row_sums, col_sums]).tocsr()
    b_eq = np.concatenate([np.full(n, 1.0 / n), np.full(m, 1.0 / m)])
    res = linprog(cost.ravel(), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if not res.success:  # pragma: no cover - the transport problem is always feasible
        raise RuntimeError(f"earth mover's distance: solver failed: {res.message}")
    return float(res.fun)


def mover_distance(originals: Sequence[str], counterfactuals: Sequence[str], encoder: TokenEncoder) -> MetricResult:
    """Mean MoverScore-like distance between each original and its counterfactual (lower = closer)."""
    if len(originals) != len(counterfactuals):
        raise ValueError(f"got {len(originals)} originals but {len(counterfactuals)} counterfactuals")
    a, b = encoder.encode(list(originals)), encoder.encode(list(counterfactuals))
    dists: list[float | None] = []
    for x, y in zip(a, b):
        d = earth_movers_distance(x, y)
        dists.append(None if np.isnan(d) else d)
    mean = mean_of(dists)
    settings = {"weights": "uniform over tokens", "cost": "Euclidean between L2-normalised token vectors",
                "solver": "exact (assignment when lengths match, else linear programme)", **encoder.describe()}
    return MetricResult("mover_distance", mean, len(dists), settings, per_item=dists,
                        details={"similarity": None if mean is None else 1.0 - mean}, higher_is_better=False)
