"""TF-IDF + a linear model: the statistical baseline of the CAD papers, with a grid search over its settings.

Features and models are those of :class:`cfaug.classifiers.tfidf_linear.TfidfLinearJudge` (word n-grams,
sublinear tf, lower-cased). ``tfidf-svm.v1`` is a linear SVM (probabilities are a softmax of its margins);
``tfidf-logreg.v1`` is logistic regression (calibrated probabilities). The grid covers ``C`` and the
largest n-gram order, searched by :func:`cfaug.classifiers.selection.select_setting`: balanced accuracy
on a dev set of 50 rows or more, else by 5-fold cross-validation over the training set, else (under 50
training rows) not at all, the default kept (:data:`DEFAULT_SETTING`: ``C`` = 1, scikit-learn's default,
and bigrams). Scores within one standard error of the best are ties, which go to the setting nearest
that default. The model is then trained on every training row with the
chosen setting. :meth:`TfidfClassifier.linear_model` gives the fitted vectorizer and the weights as one
``(n_labels, n_features)`` matrix, for attribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from cfaug.classifiers.base import CLASSIFIERS, TextClassifier, need_file
from cfaug.classifiers.selection import select_setting
from cfaug.data.inputs import JudgeInput, as_text
from cfaug.classifiers.tfidf_linear import TfidfLinearJudge

#: the setting ties and small training sets fall back to: scikit-learn's default ``C`` and word bigrams
DEFAULT_SETTING: dict[str, Any] = {"C": 1.0, "ngram_max": 2}


@dataclass
class TfidfSVMConfig:
    """``c_grid`` and ``ngram_grid``: comma-separated values searched (see the module docstring)."""

    c_grid: str = "0.01,0.1,1,10"
    ngram_grid: str = "1,2"
    min_df: int = 1


@dataclass
class TfidfLogRegConfig:
    """``c_grid`` and ``ngram_grid``: comma-separated values searched (see the module docstring)."""

    c_grid: str = "0.1,1,10,100"
    ngram_grid: str = "2"
    min_df: int = 1


class TfidfClassifier(TextClassifier):
    """TF-IDF + a linear model of kind ``kind`` (``"svm"`` or ``"logreg"``), its settings chosen by a grid
    search (see the module docstring)."""

    kind: ClassVar[str] = "svm"

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.model: TfidfLinearJudge | None = None

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str],
            dev_inputs: Sequence[JudgeInput] | None = None, dev_labels: Sequence[str] | None = None) -> dict[str, Any]:
        """Choose ``C`` and the n-gram order (:func:`~cfaug.classifiers.selection.select_setting`), then
        train on every training row. Returns the chosen setting and how it was chosen: ``selection``,
        ``score`` (its balanced accuracy; None when the default was kept), ``metric``, ``selection_rows``,
        ``selection_note`` and ``grid_scores``."""
        if len(inputs) != len(labels):
            raise ValueError("inputs and labels differ in length")
        grid = [{"C": float(c), "ngram_max": int(n)} for c in str(self.config.c_grid).split(",")
                for n in str(self.config.ngram_grid).split(",")]
        choice = select_setting(grid, DEFAULT_SETTING, inputs, labels, dev_inputs, dev_labels, self._grid_predictions,
                                seed=self.seed)
        self.model = TfidfLinearJudge(model=self.kind, C=choice.setting["C"], ngram_max=choice.setting["ngram_max"],
                                      min_df=self.config.min_df, seed=self.seed).fit(inputs, labels)
        self.labels = self.model.labels
        return choice.facts(grid)

    def _grid_predictions(self, inputs: list[JudgeInput], labels: list[str], dev_inputs: list[JudgeInput]
                          ) -> list[list[str]]:
        """What a model of every grid setting (in the grid's order: each ``C``, then each n-gram order)
        trained on ``inputs`` predicts for ``dev_inputs``, the features computed once per n-gram order."""
        cs = [float(x) for x in str(self.config.c_grid).split(",")]
        orders = [int(x) for x in str(self.config.ngram_grid).split(",")]
        texts, dev_texts = [as_text(x) for x in inputs], [as_text(x) for x in dev_inputs]
        n_labels = len(set(labels))
        out: dict[tuple[float, int], list[str]] = {}
        for n in orders:
            vec = TfidfLinearJudge(model=self.kind, ngram_max=n, min_df=self.config.min_df).vectorizer()
            X, D = vec.fit_transform(texts), vec.transform(dev_texts)
            for c in cs:
                clf = TfidfLinearJudge(model=self.kind, C=c, seed=self.seed).linear_model(n_labels).fit(X, labels)
                out[(c, n)] = [str(p) for p in clf.predict(D)]
        return [out[(c, n)] for c in cs for n in orders]

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


@CLASSIFIERS.register("tfidf-svm.v1", "TF-IDF + linear SVM, C and n-gram order chosen on the dev set or by "
                      "cross-validation")
class TfidfSVMClassifier(TfidfClassifier):
    name = "tfidf-svm.v1"
    Config = TfidfSVMConfig
    kind = "svm"


@CLASSIFIERS.register("tfidf-logreg.v1", "TF-IDF + logistic regression, C chosen on the dev set or by cross-validation")
class TfidfLogRegClassifier(TfidfClassifier):
    name = "tfidf-logreg.v1"
    Config = TfidfLogRegConfig
    kind = "logreg"
