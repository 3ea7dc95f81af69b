"""TF-IDF features with a linear model trained on the fly: the fast label judge auto-CAD, CoBA and LASS
train on their input, and the engine of the ``tfidf-*`` classifiers."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from cfaug.data.inputs import JudgeInput, as_text
from cfaug.training.store import load_pickle


class TfidfLinearJudge:
    """TF-IDF (word 1-2 grams, sublinear tf) + a linear model trained on the fly.

    ``model="logreg"`` gives calibrated probabilities (used by auto-CAD); ``model="svm"`` is the linear
    SVM of the papers' statistical baseline (probabilities are a softmax of its margins). Training is
    deterministic for a given ``seed``.
    """

    def __init__(self, model: str = "logreg", C: float = 1.0, ngram_max: int = 2, min_df: int = 1,
                 seed: int = 0) -> None:
        if model not in ("logreg", "svm"):
            raise ValueError(f"model must be 'logreg' or 'svm', got {model!r}")
        self.model_kind, self.C, self.ngram_max, self.min_df, self.seed = model, C, ngram_max, min_df, seed
        self.labels: tuple[str, ...] = ()
        self._vec: Any = None
        self._clf: Any = None
        self._train_hash = ""
        self.provenance: dict[str, Any] = {}  #: where the training data came from (file, hash, rows)

    @property
    def name(self) -> str:
        return f"tfidf-{self.model_kind}"

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str]) -> TfidfLinearJudge:
        texts = [as_text(x) for x in inputs]
        if len(set(labels)) < 2:
            raise ValueError("a classifier needs at least two distinct labels in its training data")
        self._vec = self.vectorizer()
        X = self._vec.fit_transform(texts)
        self._clf = self.linear_model(len(set(labels)))
        self._clf.fit(X, list(labels))
        self.labels = tuple(str(c) for c in self._clf.classes_)
        h = hashlib.sha256()
        for t, y in zip(texts, labels):
            h.update(t.encode("utf-8", "replace"))
            h.update(b"\0" + str(y).encode() + b"\n")
        self._train_hash = h.hexdigest()[:16]
        return self

    def vectorizer(self) -> Any:
        """A new, unfitted ``TfidfVectorizer`` with this judge's features (word 1..``ngram_max`` grams,
        sublinear tf, lower-cased)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(ngram_range=(1, self.ngram_max), sublinear_tf=True, min_df=self.min_df,
                               lowercase=True, token_pattern=r"(?u)\b\w[\w']*\b")

    def linear_model(self, n_labels: int) -> Any:
        """A new, unfitted scikit-learn linear model of this judge's kind and ``C`` for ``n_labels`` labels."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        if self.model_kind == "logreg":
            # liblinear is binary only; more classes (ratings, NLI) get a multinomial model
            solver = "liblinear" if n_labels == 2 else "lbfgs"
            return LogisticRegression(C=self.C, max_iter=2000, solver=solver, random_state=self.seed)
        return LinearSVC(C=self.C, random_state=self.seed)

    def decision(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        X = self._vec.transform([as_text(x) for x in inputs])
        d = self._clf.decision_function(X)
        if d.ndim == 1:
            d = np.stack([-d, d], axis=1) / 2.0
        return d

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        if self._clf is None:
            raise RuntimeError("TfidfLinearJudge.predict_proba called before fit")
        if len(inputs) == 0:
            return np.zeros((0, len(self.labels)))
        if self.model_kind == "logreg":
            return self._clf.predict_proba(self._vec.transform([as_text(x) for x in inputs]))
        d = self.decision(inputs)
        e = np.exp(d - d.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "C": self.C, "ngram_max": self.ngram_max, "min_df": self.min_df,
                "seed": self.seed, "train_sha256": self._train_hash, "labels": list(self.labels), **self.provenance}

    def save(self, path: str | os.PathLike[str]) -> None:
        import pickle

        with open(path, "wb") as fh:
            pickle.dump(self, fh)

    @staticmethod
    def load(path: str | os.PathLike[str]) -> TfidfLinearJudge:
        obj = load_pickle(path)
        if not isinstance(obj, TfidfLinearJudge):
            raise TypeError(f"{path} does not hold a TfidfLinearJudge")
        return obj
