"""TF-IDF + linear SVM, the statistical baseline of the CAD papers, with a grid search on the dev set.

Features and model are those of :class:`cfaug.judges.classifier.TfidfLinearJudge` (``model="svm"``:
word n-grams, sublinear tf, lower-cased). The grid covers ``C`` and the largest n-gram order; the
setting with the best dev accuracy wins (ties go to the earlier grid point: smaller C, then lower order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cfaug.evaluate.downstream.classifiers import CLASSIFIERS, TextClassifier, accuracy
from cfaug.judges.classifier import JudgeInput, TfidfLinearJudge, predict_labels


@dataclass
class TfidfSVMConfig:
    """``c_grid`` and ``ngram_grid``: comma-separated values searched on the dev set."""

    c_grid: str = "0.01,0.1,1,10"
    ngram_grid: str = "1,2"
    min_df: int = 1


@CLASSIFIERS.register("tfidf-svm.v1", "TF-IDF + linear SVM, C and n-gram order chosen on the dev set")
class TfidfSVMClassifier(TextClassifier):
    name = "tfidf-svm.v1"
    Config = TfidfSVMConfig

    def __init__(self, config: TfidfSVMConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.model: TfidfLinearJudge | None = None

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str], dev_inputs: Sequence[JudgeInput],
            dev_labels: Sequence[str]) -> dict[str, Any]:
        cs = [float(x) for x in str(self.config.c_grid).split(",")]
        orders = [int(x) for x in str(self.config.ngram_grid).split(",")]
        best: tuple[float, TfidfLinearJudge, dict[str, Any]] | None = None
        for c in cs:
            for n in orders:
                model = TfidfLinearJudge(model="svm", C=c, ngram_max=n, min_df=self.config.min_df,
                                         seed=self.seed).fit(inputs, labels)
                acc = accuracy(predict_labels(model, dev_inputs), dev_labels)
                if best is None or acc > best[0]:
                    best = (acc, model, {"C": c, "ngram_max": n, "dev_accuracy": acc})
        assert best is not None
        self.model = best[1]
        return best[2]

    def predict(self, inputs: Sequence[JudgeInput]) -> list[str]:
        if self.model is None:
            raise RuntimeError("predict called before fit")
        return predict_labels(self.model, inputs)
