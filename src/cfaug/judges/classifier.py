"""Label judges: classifiers that say how strongly a text carries each label.

Every judge has ``name``, ``labels`` (column order of :meth:`predict_proba`) and ``describe()`` (settings
and hashes for provenance). Inputs are strings, or (premise, hypothesis) pairs for NLI.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.judges.base import JudgeInput, LabelJudge, predict_labels  # noqa: F401  (re-exported)
from cfaug.judges.models import quiet_transformers, resolve_local_model, torch_device

PAIR_SEP = " [SEP] "


def as_text(x: JudgeInput) -> str:
    return x if isinstance(x, str) else PAIR_SEP.join(x)


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
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        texts = [as_text(x) for x in inputs]
        if len(set(labels)) < 2:
            raise ValueError("a classifier needs at least two distinct labels in its training data")
        self._vec = TfidfVectorizer(ngram_range=(1, self.ngram_max), sublinear_tf=True, min_df=self.min_df,
                                    lowercase=True, token_pattern=r"(?u)\b\w[\w']*\b")
        X = self._vec.fit_transform(texts)
        if self.model_kind == "logreg":
            # liblinear is binary only; more classes (ratings, NLI) get a multinomial model
            solver = "liblinear" if len(set(labels)) == 2 else "lbfgs"
            self._clf = LogisticRegression(C=self.C, max_iter=2000, solver=solver, random_state=self.seed)
        else:
            self._clf = LinearSVC(C=self.C, random_state=self.seed)
        self._clf.fit(X, list(labels))
        self.labels = tuple(str(c) for c in self._clf.classes_)
        h = hashlib.sha256()
        for t, y in zip(texts, labels):
            h.update(t.encode("utf-8", "replace"))
            h.update(b"\0" + str(y).encode() + b"\n")
        self._train_hash = h.hexdigest()[:16]
        return self

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
        with open(path, "wb") as fh:
            pickle.dump(self, fh)

    @staticmethod
    def load(path: str | os.PathLike[str]) -> TfidfLinearJudge:
        with open(path, "rb") as fh:
            obj = pickle.load(fh)
        if not isinstance(obj, TfidfLinearJudge):
            raise TypeError(f"{path} does not hold a TfidfLinearJudge")
        return obj


class HFClassifierJudge:
    """A Hugging Face sequence classifier loaded from a local folder.

    ``labels`` maps the model's output columns to task labels in order; when omitted, the model's
    ``id2label`` names are used after lower-casing (``LABEL_0``-style names require ``labels``).
    """

    def __init__(self, path: str | os.PathLike[str], labels: Sequence[str] | None = None,
                 device: str | None = None, batch_size: int = 32, max_length: int = 512) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.path = resolve_local_model(path, "classifier")
        self.device = torch_device(device)
        self.batch_size, self.max_length = batch_size, max_length
        quiet_transformers()
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(str(self.path), local_files_only=True)
        self.model.to(self.device).eval()
        n = self.model.config.num_labels
        if labels is None:
            names = [str(self.model.config.id2label.get(i, f"LABEL_{i}")).lower() for i in range(n)]
            if any(nm.startswith("label_") for nm in names):
                raise ValueError(f"classifier {self.path} has unnamed labels {names}; pass labels=... in output order")
            labels = names
        if len(labels) != n:
            raise ValueError(f"classifier {self.path} has {n} outputs but {len(labels)} labels were given")
        self.labels = tuple(labels)
        self._torch = torch

    @property
    def name(self) -> str:
        return f"hf:{self.path.name}"

    def predict_proba(self, inputs: Sequence[JudgeInput]) -> np.ndarray:
        out = []
        with self._torch.inference_mode():
            for i in range(0, len(inputs), self.batch_size):
                chunk = inputs[i: i + self.batch_size]
                if chunk and not isinstance(chunk[0], str):
                    enc = self.tokenizer([c[0] for c in chunk], [c[1] for c in chunk], truncation=True,
                                         max_length=self.max_length, padding=True, return_tensors="pt")
                else:
                    enc = self.tokenizer(list(chunk), truncation=True, max_length=self.max_length,
                                         padding=True, return_tensors="pt")
                enc = {k: v.to(self.device) for k, v in enc.items()}
                logits = self.model(**enc).logits.float()
                out.append(self._torch.softmax(logits, dim=-1).cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, len(self.labels)))

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "path": str(self.path), "labels": list(self.labels),
                "config_sha256": _file_hash(self.path / "config.json")}


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else "unknown"
