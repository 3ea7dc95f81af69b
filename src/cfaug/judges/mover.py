"""MoverScore: how close a rewrite stays to its original, as an earth mover's distance between the two
texts' contextual token vectors (Zhao et al., 2019, "MoverScore: Text Generation Evaluating with
Contextualized Embeddings and Earth Mover Distance").

Each text is a uniform distribution over its word pieces (special tokens dropped; vectors from
:class:`~cfaug.judges.token_embeddings.TokenEncoder`, L2-normalised); moving mass costs the Euclidean
distance between two vectors (0 to 2); the transport problem is solved exactly. The score is
``1 - distance``: 1 for identical texts, lower the further apart (at worst -1). This is what the
``moverscore`` package's ``word_mover_score`` computes with uniform idf weights (``defaultdict(lambda:
1.)``) and ``n_gram=1``. Differences that remain, so numbers are on another scale than published ones:

* the model: the package defaults to the last layer of ``distilbert-base-uncased`` (its v1 used a BERT
  fine-tuned on MNLI, pooling the last five layers); cfaug defaults to the last layer of the
  transformer inside the packaged all-MiniLM-L6-v2, and never downloads one (``model`` takes a local
  folder);
* masking: the package gives no mass to punctuation tokens and to ``##`` word-piece continuations but
  keeps ``[CLS]``/``[SEP]`` under uniform weights; cfaug weighs every word piece alike and drops the
  special tokens;
* long texts: the package truncates at the model's window; cfaug encodes consecutive windows;
* some versions of the package return ``1 / (1 + distance)`` instead of ``1 - distance``.

The score is symmetric (uniform weights on both sides); an empty text (no word pieces) scores NaN.

>>> import numpy as np
>>> earth_movers_distance(np.array([[0.0], [1.0]]), np.array([[0.0], [3.0]]))
1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cfaug.config import param
from cfaug.judges.base import Candidate
from cfaug.judges.registry import register_judge

#: what every MoverScore figure states about how it was computed (the judge and the evaluation metric)
SETTINGS = {"weights": "uniform over tokens", "cost": "Euclidean between L2-normalised token vectors",
            "solver": "exact (POT network simplex)", "n_gram": 1}

#: pairs whose token vectors are held at once by :func:`mover_score`
CHUNK = 128


def earth_movers_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Exact EMD between uniform distributions over the rows of ``x`` and of ``y`` with Euclidean cost
    (NaN when either is empty), solved by POT's network simplex (``ot.emd2``)."""
    if len(x) == 0 or len(y) == 0:
        return float("nan")
    import ot
    from scipy.spatial.distance import cdist

    cost = cdist(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
    n, m = cost.shape
    return float(ot.emd2(np.full(n, 1.0 / n), np.full(m, 1.0 / m), cost, numItermax=1_000_000))


def mover_score(encoder: Any, originals: Sequence[str], rewrites: Sequence[str]) -> list[float]:
    """MoverScore (``1 - EMD``) of each rewrite against its original, with ``encoder`` (a
    :class:`~cfaug.judges.token_embeddings.TokenEncoder`). NaN where a text has no word pieces."""
    if len(originals) != len(rewrites):
        raise ValueError(f"got {len(originals)} originals but {len(rewrites)} rewrites")
    scores: list[float] = []
    for start in range(0, len(originals), CHUNK):
        a = encoder.encode(list(originals[start: start + CHUNK]))
        b = encoder.encode(list(rewrites[start: start + CHUNK]))
        scores += [1.0 - earth_movers_distance(x, y) for x, y in zip(a, b)]
    return scores


@dataclass
class MoverScoreConfig:
    model: str | None = param(None, "local transformer folder giving the token vectors (default: the transformer "
                                    "of the packaged all-MiniLM-L6-v2)")
    layer: int = param(-1, "hidden layer whose vectors are compared (-1: the last)")
    max_length: int = param(512, "encoder window in word pieces, special tokens included; longer texts are "
                                 "encoded in consecutive windows", min=4)


class MoverScoreJudge:
    """MoverScore of each candidate's new text against its old text (higher: closer)."""

    name = "moverscore"

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        return np.asarray(mover_score(self.encoder, [c.old_text for c in batch], [c.new_text for c in batch]),
                          dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "score": "1 - earth mover's distance", **SETTINGS, **self.encoder.describe()}


@register_judge("moverscore.v1", "MoverScore (1 - earth mover's distance of token vectors) between original and "
                "rewrite", MoverScoreConfig, kind="score")
def build_moverscore(cfg: MoverScoreConfig, ctx: Any) -> MoverScoreJudge:
    """The judge for ``cfg``; ``ctx`` (a :class:`~cfaug.judges.registry.JudgeContext`, or None) gives the
    device."""
    from cfaug.config import ConfigError
    from cfaug.local_models import ModelPathError
    from cfaug.judges.token_embeddings import TokenEncoder

    try:
        encoder = TokenEncoder(cfg.model, layer=cfg.layer, max_length=cfg.max_length,
                               device=getattr(ctx, "device", None))
    except ModelPathError as exc:
        raise ConfigError(f"model: {exc}") from None
    return MoverScoreJudge(encoder)
