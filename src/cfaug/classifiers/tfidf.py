"""TF-IDF + a linear model: the statistical baseline of the CAD papers, with a grid search on the dev set.

Features and models are those of :class:`cfaug.classifiers.tfidf_linear.TfidfLinearJudge` (word n-grams,
sublinear tf, lower-cased). ``tfidf-svm.v1`` is a linear SVM (probabilities are a softmax of its margins);
``tfidf-logreg.v1`` is logistic regression (calibrated probabilities). The grid covers ``C`` and the
largest n-gram order; the setting with the best dev accuracy wins (ties go to the earlier grid point:
smaller C, then lower order). :meth:`TfidfClassifier.linear_model` gives the fitted vectorizer and the
weights as one ``(n_labels, n_features)`` matrix, for attribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cfaug.classifiers.base import CLASSIFIERS, TextClassifier, accuracy, need_file, split_dev
from cfaug.data.inputs import JudgeInput
from cfaug.classifiers.tfidf_linear import TfidfLinearJudge


@dataclass
class TfidfSVMConfig:
    """``c_grid`` and ``ngram_grid``: comma-separated values searched on the dev set."""

    c_grid: str = "0.01,0.1,1,10"
    ngram_grid: str = "1,2"
    min_df: int = 1


@dataclass
class TfidfLogRegConfig:
    """``c_grid`` and ``ngram_grid``: comma-separated values searched on the dev set."""

    c_grid: str = "0.1,1,10,100"
    ngram_grid: str = "2"
    min_df: int = 1


class TfidfClassifier(TextClassifier):
    """TF-IDF + a linear model of kind ``kind`` (``"svm"`` or ``"logreg"``) chosen by a dev grid search."""

    kind: ClassVar[str] = "svm"

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.model: TfidfLinearJudge | None = None

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str],
            dev_inputs: Sequence[JudgeInput] | None = None, dev_labels: Sequence[str] | None = None) -> dict[str, Any]:
        inputs, labels, dev_inputs, dev_labels, facts = split_dev(inputs, labels, dev_inputs, dev_labels, self.seed)
        cs = [float(x) for x in str(self.config.c_grid).split(",")]
        orders = [int(x) for x in str(self.config.ngram_grid).split(",")]
        best: tuple[float, TfidfLinearJudge, dict[str, Any]] | None = None
        for c in cs:
            for n in orders:
                model = TfidfLinearJudge(model=self.kind, C=c, ngram_max=n, min_df=self.config.min_df,
                                         seed=self.seed).fit(inputs, labels)
                probs = model.predict_proba(dev_inputs)
                acc = accuracy([model.labels[i] for i in probs.argmax(axis=1)], dev_labels)
                if best is None or acc > best[0]:
                    best = (acc, model, {"C": c, "ngram_max": n, "dev_accuracy": acc})
        assert best is not None
        self.model = best[1]
        self.labels = self.model.labels
        return {**best[2], **facts}

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        if self.model is None:
            raise RuntimeError(f"{self.name}: predict_proba called before fit")
        return self.model.predict_proba(inputs)

    def linear_model(self) -> tuple[Any, np.ndarray, np.ndarray]:
        """(the fitted ``TfidfVectorizer``, ``W`` of shape ``(n_labels, n_features)``, ``b`` of shape
        ``(n_labels,)``) with ``softmax(vectorizer.transform(texts) @ W.T + b) == predict_proba(texts)``.
        A binary model (``coef_`` of shape ``(1, F)``) gives ``W = [-coef/2, +coef/2]`` and
        ``b = [-intercept/2, +intercept/2]``. NLI pairs are read as
        :func:`cfaug.data.inputs.as_text` joins them."""
        if self.model is None:
            raise RuntimeError(f"{self.name}: linear_model called before fit")
        clf = self.model._clf
        coef = np.asarray(clf.coef_, dtype=np.float64)
        intercept = np.asarray(clf.intercept_, dtype=np.float64).reshape(-1)
        if coef.shape[0] == 1:
            return self.model._vec, np.vstack([-coef / 2, coef / 2]), np.array([-intercept[0] / 2, intercept[0] / 2])
        return self.model._vec, coef, intercept

    def _save_weights(self, folder: Path) -> dict[str, Any]:
        if self.model is None:
            raise RuntimeError(f"{self.name}: save called before fit")
        self.model.save(folder / "model.pkl")
        return {"weights": ["model.pkl"], "chosen": {"C": self.model.C, "ngram_max": self.model.ngram_max}}

    def _load_weights(self, folder: Path, manifest: dict[str, Any]) -> None:
        self.model = TfidfLinearJudge.load(need_file(folder, "model.pkl"))
        self.labels = self.model.labels


@CLASSIFIERS.register("tfidf-svm.v1", "TF-IDF + linear SVM, C and n-gram order chosen on the dev set")
class TfidfSVMClassifier(TfidfClassifier):
    name = "tfidf-svm.v1"
    Config = TfidfSVMConfig
    kind = "svm"


@CLASSIFIERS.register("tfidf-logreg.v1", "TF-IDF + logistic regression, C chosen on the dev set")
class TfidfLogRegClassifier(TfidfClassifier):
    name = "tfidf-logreg.v1"
    Config = TfidfLogRegConfig
    kind = "logreg"
