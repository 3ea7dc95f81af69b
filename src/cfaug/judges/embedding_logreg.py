"""A sentiment judge of another kind than the TF-IDF ones: logistic regression over sentence embeddings.

auto-CAD and CoBA judge their own edits with TF-IDF models trained on the input. A rewrite chosen to please
such a model can still read as the source label to any other reader ("always friendly in their tone and
always have shitty customer service !"). This judge reads meaning, not word counts: the packaged
all-MiniLM-L6-v2 encoder with a logistic regression trained on the shipped general sentiment sample (10,000
Yelp review sentences and 10,000 SST-2 phrases). The regression's weights ship with cfaug
(``resources/sentiment/general-minilm.json``, made by :func:`train_general` with ``python -m
cfaug.judges.embedding_logreg``); a different encoder (another weights file) trains them again, once, into
the model store.

Used by the completeness check (clause by clause) and the shared choice step (the independent judge's
probability of the target) where the task is binary sentiment on one text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["EmbeddingJudge", "LazyGeneralJudge", "general_embedding_judge", "train_general"]

#: the shipped weights, trained on the general sample with the packaged encoder
WEIGHTS = "general-minilm.json"
#: the regression's inverse regularisation strength
C = 4.0


class EmbeddingJudge:
    """``predict_proba(texts)`` of a logistic regression over ``encoder`` embeddings (``coef``: one row per
    label but the first, as scikit-learn's binary model has; here always two labels)."""

    name = "minilm-logreg"

    def __init__(self, encoder: Any, labels: Sequence[str], coef: np.ndarray, intercept: np.ndarray,
                 provenance: dict[str, Any] | None = None) -> None:
        self.encoder = encoder
        self.labels = tuple(labels)
        self.coef = np.asarray(coef, dtype=np.float32).reshape(1, -1)
        self.intercept = np.asarray(intercept, dtype=np.float32).reshape(1)
        self.provenance = dict(provenance or {})

    def predict_proba(self, texts: Sequence[Any]) -> np.ndarray:
        texts = [t if isinstance(t, str) else " ".join(t) for t in texts]
        if not texts:
            return np.zeros((0, 2))
        z = self.encoder.encode(texts) @ self.coef[0] + self.intercept[0]
        p1 = 1.0 / (1.0 + np.exp(-z.astype(np.float64)))
        return np.stack([1.0 - p1, p1], axis=1)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "encoder": Path(str(getattr(self.encoder, "path", ""))).name,
                **self.provenance}


def _encoder_sha(encoder: Any) -> str:
    return str(encoder.describe().get("weights_sha256", ""))


def train_general(encoder: Any) -> dict[str, Any]:
    """The weights of the general judge for ``encoder``: a logistic regression (``C``) on the embeddings of
    the shipped general sample; returned as the JSON object :func:`general_embedding_judge` reads."""
    import csv
    import hashlib
    from importlib import resources

    from sklearn.linear_model import LogisticRegression

    from cfaug.judges.builtin import general_background_path

    with resources.as_file(general_background_path()) as path:
        raw = Path(path).read_bytes()
        with Path(path).open(encoding="utf-8", newline="") as fh:
            rows = [(r["text"], r["label"]) for r in csv.DictReader(fh, delimiter="\t")]
    X = encoder.encode([t for t, _ in rows])
    y = [lab for _, lab in rows]
    model = LogisticRegression(C=C, max_iter=2000).fit(X, y)
    return {"labels": [str(x) for x in model.classes_], "coef": [round(float(v), 6) for v in model.coef_[0]],
            "intercept": round(float(model.intercept_[0]), 6), "encoder_sha256": _encoder_sha(encoder),
            "train_data": "general (shipped sample)", "train_rows": len(rows),
            "train_data_sha256": hashlib.sha256(raw).hexdigest(), "C": C}


_LOADED: dict[tuple[str, str], EmbeddingJudge] = {}


def general_embedding_judge(device: str = "cpu", encoder: Any = None) -> EmbeddingJudge:
    """The general sentiment judge over the packaged encoder (or ``encoder``): the shipped weights when they
    were trained with the same encoder weights, else weights trained here once and kept in the model store
    (``$CFAUG_MODEL_STORE/judges``). One judge per encoder and device per process."""
    from importlib import resources

    from cfaug.data.io.atomic import atomic_path
    from cfaug.training.store import default_store_dir

    if encoder is None:
        from cfaug.judges.similarity import SentenceEncoder

        key = ("default", device)
        if key in _LOADED:
            return _LOADED[key]
        encoder = SentenceEncoder(device=device)
    else:
        key = (str(getattr(encoder, "path", id(encoder))), device)
        if key in _LOADED:
            return _LOADED[key]
    sha = _encoder_sha(encoder)
    shipped = json.loads((resources.files("cfaug.resources") / "sentiment" / WEIGHTS).read_text(encoding="utf-8"))
    weights = shipped if shipped.get("encoder_sha256") == sha else None
    if weights is None:
        path = default_store_dir() / "judges" / f"general-minilm-{sha[:16]}.json"
        if path.is_file():
            try:
                weights = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                weights = None
        if weights is None:
            weights = train_general(encoder)
            with atomic_path(path) as tmp:
                Path(tmp).write_text(json.dumps(weights), encoding="utf-8")
    prov = {k: weights[k] for k in ("train_data", "train_rows", "train_data_sha256") if k in weights}
    judge = EmbeddingJudge(encoder, weights["labels"], np.asarray(weights["coef"]), np.asarray([weights["intercept"]]),
                           prov)
    _LOADED[key] = judge
    return judge


class LazyGeneralJudge:
    """:func:`general_embedding_judge`, loaded on the first :meth:`predict_proba` (a run whose checks never
    need it, a batch of long reviews say, does not load the encoder). Its labels are known unloaded."""

    name = EmbeddingJudge.name

    def __init__(self, device: str = "cpu") -> None:
        from importlib import resources

        self.device = device
        shipped = json.loads((resources.files("cfaug.resources") / "sentiment" / WEIGHTS).read_text(encoding="utf-8"))
        self.labels = tuple(shipped["labels"])
        self._judge: EmbeddingJudge | None = None

    def predict_proba(self, texts: Sequence[Any]) -> np.ndarray:
        if not texts:
            return np.zeros((0, len(self.labels)))
        if self._judge is None:
            self._judge = general_embedding_judge(self.device)
            assert tuple(self._judge.labels) == self.labels
        return self._judge.predict_proba(texts)

    def describe(self) -> dict[str, Any]:
        return self._judge.describe() if self._judge is not None else {"judge": self.name, "loaded": False}


def main() -> None:  # pragma: no cover - writes the shipped weights
    """``python -m cfaug.judges.embedding_logreg``: train the shipped weights with the packaged encoder."""
    from importlib import resources

    from cfaug.judges.similarity import SentenceEncoder

    weights = train_general(SentenceEncoder())
    path = Path(str(resources.files("cfaug.resources") / "sentiment" / WEIGHTS))
    path.write_text(json.dumps(weights, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {path} ({weights['train_rows']} training rows)")


if __name__ == "__main__":  # pragma: no cover
    main()
