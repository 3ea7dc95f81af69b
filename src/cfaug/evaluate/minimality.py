"""Minimality: how little a counterfactual changes its original.

* ``edit_rate``: token-level Levenshtein distance divided by the original's token count, over
  lower-cased word and punctuation tokens (:func:`cfaug.nlp.tokens.tokenize`). 0 = unchanged;
  can exceed 1 when the rewrite is longer than the original.
* ``mover_distance``: the earth mover's distance between the two texts' contextual token vectors, that is
  ``1 - MoverScore`` as the judges part :func:`cfaug.judges.mover.mover_score` computes it (uniform
  weights over word pieces, special tokens dropped, Euclidean cost between L2-normalised vectors, 0 to 2,
  exact solver; long texts encoded in consecutive windows). ``details["similarity"]`` is the mean
  MoverScore, ``1 - distance``. See :mod:`cfaug.judges.mover` for how it differs from the ``moverscore``
  package (whose numbers it does not reproduce).

>>> from cfaug.evaluate.minimality import edit_rate
>>> edit_rate(["the film is good ."], ["the film is bad ."]).value
0.2
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cfaug.evaluate.result import MetricResult, mean_of
from cfaug.judges.mover import SETTINGS, mover_score
from cfaug.nlp.tokens import token_edit_rate
from cfaug.judges.token_embeddings import TokenEncoder


def edit_rate(originals: Sequence[str], counterfactuals: Sequence[str]) -> MetricResult:
    """Mean token edit rate (lower = more minimal)."""
    if len(originals) != len(counterfactuals):
        raise ValueError(f"got {len(originals)} originals but {len(counterfactuals)} counterfactuals")
    rates = [token_edit_rate(o, c) for o, c in zip(originals, counterfactuals)]
    settings = {"tokenization": "lower-cased words and punctuation (regex \\w+(?:'\\w+)?|[^\\w\\s])",
                "distance": "Levenshtein over tokens, unit costs", "normaliser": "original token count"}
    return MetricResult("edit_rate", mean_of(list(rates)), len(rates), settings, per_item=list(rates),
                        higher_is_better=False)


def mover_distance(originals: Sequence[str], counterfactuals: Sequence[str], encoder: TokenEncoder) -> MetricResult:
    """Mean earth mover's distance (``1 - MoverScore``) between each original and its counterfactual
    (lower = closer)."""
    if len(originals) != len(counterfactuals):
        raise ValueError(f"got {len(originals)} originals but {len(counterfactuals)} counterfactuals")
    return mover_result(mover_score(encoder, list(originals), list(counterfactuals)), encoder)


def mover_result(scores: Sequence[float], encoder: TokenEncoder) -> MetricResult:
    """The ``mover_distance`` result from per-pair MoverScores (:func:`cfaug.judges.mover.mover_score`)."""
    dists: list[float | None] = [None if math.isnan(s) else 1.0 - s for s in scores]
    mean = mean_of(dists)
    settings = {**SETTINGS, "distance": "1 - MoverScore (cfaug.judges.mover)", **encoder.describe()}
    return MetricResult("mover_distance", mean, len(dists), settings, per_item=dists,
                        details={"similarity": None if mean is None else 1.0 - mean}, higher_is_better=False)
