"""Out-of-distribution detection: how well a classifier's confidence separates its own test data from
another dataset (as in CoBA's Table 7: a model trained on one sentiment dataset, IMDB, SST-2 or Yelp
sentences as the out-of-distribution set).

Each text gets an in-distribution score, higher = more in-distribution:

* ``"msp"``: the maximum softmax probability (Hendrycks & Gimpel 2017), from ``predict_proba``;
* ``"energy"``: the negative free energy ``logsumexp(logits)`` (Liu et al. 2020), only for a model with a
  ``predict_logits(texts) -> array`` method.

AUROC takes the in-distribution texts as positives (``sklearn.metrics.roc_auc_score``); 100 = perfect
separation, 50 = chance. FPR at 95% TPR is the share of out-of-distribution texts scored at or above the
threshold that keeps 95% of the in-distribution texts (the first ROC point with TPR >= 0.95). Both are
in percent.

>>> import numpy as np
>>> class M:
...     def predict_proba(self, texts):
...         return np.array([[0.99, 0.01] if "movie" in t else [0.5, 0.5] for t in texts])
>>> ood_auroc(M(), ["a movie", "the movie"], ["a meal", "the food"]).auroc
100.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

SCORES = ("msp", "energy")


class ProbaModel(Protocol):
    """A classifier giving class probabilities for a batch of texts (rows sum to 1)."""

    def predict_proba(self, inputs: list[str]) -> np.ndarray: ...


@dataclass
class OODResult:
    """AUROC and FPR at 95% TPR (percent) of one in-distribution / out-of-distribution split."""

    auroc: float
    fpr_at_95_tpr: float
    n_in: int
    n_out: int
    score: str
    mean_score_in: float
    mean_score_out: float

    def facts(self) -> dict[str, Any]:
        return {"auroc": self.auroc, "fpr_at_95_tpr": self.fpr_at_95_tpr, "n_in": self.n_in, "n_out": self.n_out,
                "score": self.score, "mean_score_in": self.mean_score_in, "mean_score_out": self.mean_score_out}


def ood_scores(model: ProbaModel, texts: Sequence[str], score: str = "msp") -> np.ndarray:
    """The in-distribution score of each text (higher = more in-distribution), one model call."""
    if score == "msp":
        probs = np.asarray(model.predict_proba(list(texts)), dtype=float)
        if probs.ndim != 2 or len(probs) != len(texts):
            raise ValueError(f"predict_proba returned shape {probs.shape} for {len(texts)} texts")
        return probs.max(axis=1)
    if score == "energy":
        if not hasattr(model, "predict_logits"):
            raise ValueError("score='energy' needs a model with predict_logits(texts); use score='msp'")
        logits = np.asarray(model.predict_logits(list(texts)), dtype=float)
        if logits.ndim != 2 or len(logits) != len(texts):
            raise ValueError(f"predict_logits returned shape {logits.shape} for {len(texts)} texts")
        top = logits.max(axis=1)
        return top + np.log(np.exp(logits - top[:, None]).sum(axis=1))
    raise ValueError(f"unknown OOD score {score!r}; choose one of {', '.join(SCORES)}")


def auroc_and_fpr95(in_scores: np.ndarray, out_scores: np.ndarray) -> tuple[float, float]:
    """(AUROC, FPR at 95% TPR), in percent, with the in-distribution scores as positives."""
    from sklearn.metrics import roc_auc_score, roc_curve

    y = np.concatenate([np.ones(len(in_scores)), np.zeros(len(out_scores))])
    s = np.concatenate([in_scores, out_scores])
    auroc = float(roc_auc_score(y, s))
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    fpr95 = float(fpr[int(np.searchsorted(tpr, 0.95, side="left"))])
    return 100.0 * auroc, 100.0 * fpr95


def ood_auroc(model: ProbaModel, in_texts: Sequence[str], out_texts: Sequence[str], score: str = "msp") -> OODResult:
    """OOD detection of ``out_texts`` against ``in_texts`` by ``model``'s confidence (see module docstring).
    The model is called once on all texts."""
    if not in_texts or not out_texts:
        raise ValueError(f"OOD detection needs both sets non-empty (got {len(in_texts)} in-distribution and "
                         f"{len(out_texts)} out-of-distribution texts)")
    scores = ood_scores(model, [*in_texts, *out_texts], score)
    s_in, s_out = scores[:len(in_texts)], scores[len(in_texts):]
    auroc, fpr95 = auroc_and_fpr95(s_in, s_out)
    return OODResult(auroc, fpr95, len(in_texts), len(out_texts), score, float(s_in.mean()), float(s_out.mean()))
