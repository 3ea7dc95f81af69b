"""The built-in judges: label classifiers (TF-IDF trained by cfaug, a local Hugging Face classifier) and
score judges (sentence-embedding similarity to the original, token edit rate, MoverScore, the last
registered by :mod:`cfaug.judges.mover`). The LLM judge is registered by the LLM methods that can lend
it their model (``llm.v1``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cfaug.config import ConfigError, param
from cfaug.judges import mover as _mover  # noqa: F401  (registers moverscore.v1)
from cfaug.judges.base import Candidate
from cfaug.judges.registry import JudgeContext, register_judge


@dataclass
class TfidfConfig:
    data: str | None = param(None, "labelled dataset to train on (any supported format); None: the caller trains it")
    model: str = param("logreg", "linear model", choices=("logreg", "svm"))
    C: float = param(1.0, "inverse regularisation strength", min=1e-6)
    ngram_max: int = param(2, "longest word n-gram", min=1, max=5)
    min_df: int = param(1, "minimum document frequency of a feature", min=1)
    text_col: str | None = param(None, "text column of data (default: found by name)")
    label_col: str | None = param(None, "label column of data (default: found by name)")


@register_judge("tfidf.v1", "TF-IDF word n-grams + logistic regression or linear SVM, trained by cfaug", TfidfConfig)
def build_tfidf(cfg: TfidfConfig, ctx: JudgeContext) -> Any:
    from cfaug.classifiers.tfidf_linear import TfidfLinearJudge

    judge = TfidfLinearJudge(model=cfg.model, C=cfg.C, ngram_max=cfg.ngram_max, min_df=cfg.min_df, seed=ctx.seed)
    if cfg.data:
        records = read_labelled(cfg.data, ctx, cfg.text_col, cfg.label_col)
        judge.fit([judge_input(r.fields, ctx.task.roles) for r in records], [r.label for r in records])
        judge.provenance = training_provenance(cfg.data, records)
    return judge


@dataclass
class HFConfig:
    path: str = param("", "local folder of a sequence classifier: a Hugging Face model, or one saved by cfaug")
    labels: str | None = param(None, "the model's outputs as task labels, in order, comma-separated (needed when "
                               "its config names them LABEL_0, LABEL_1...; spellings such as POSITIVE or neg "
                               "map onto the task's labels without it)")
    batch_size: int = param(32, "texts per forward pass", min=1, identity=False)


@register_judge("hf-classifier.v1", "a local Hugging Face sequence classifier (by path, never downloaded)", HFConfig)
def build_hf(cfg: HFConfig, ctx: JudgeContext) -> Any:
    from cfaug.judges.classifier import load_classifier_by_path

    if not cfg.path:
        raise ConfigError("hf-classifier needs path=DIR: a local sequence classifier folder")
    names = [x.strip() for x in cfg.labels.split(",")] if cfg.labels else None
    return load_classifier_by_path(cfg.path, labels=names, label_space=ctx.task.label_space, device=ctx.device,
                                   batch_size=cfg.batch_size, flag="labels=",
                                   flag_note=" (a method's judge_labels or classifier_labels, cfaug evaluate's "
                                             "--judge-labels)")


@dataclass
class SimilarityConfig:
    encoder: str | None = param(None, "local sentence-transformers folder (default: packaged all-MiniLM-L6-v2)")


class SimilarityJudge:
    """Cosine of the sentence embeddings of the original and the rewritten field."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.name = "similarity"

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        if not batch:
            return np.zeros(0)
        return np.asarray(self.encoder.cosine([c.old_text for c in batch], [c.new_text for c in batch]), dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, **self.encoder.describe()}


@register_judge("sentence-similarity.v1", "sentence-embedding cosine between original and rewrite", SimilarityConfig,
                kind="score")
def build_similarity(cfg: SimilarityConfig, ctx: JudgeContext) -> SimilarityJudge:
    from cfaug.local_models import ModelPathError
    from cfaug.judges.similarity import SentenceEncoder

    try:
        return SimilarityJudge(SentenceEncoder(cfg.encoder, device=ctx.device))
    except ModelPathError as exc:
        raise ConfigError(f"encoder: {exc}") from None


@dataclass
class EditRateConfig:
    """(no parameters)"""


class EditRateJudge:
    """Token-level Levenshtein distance divided by the original's token count (0 = unchanged)."""

    name = "edit_rate"

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        from cfaug.nlp.tokens import token_edit_rate

        return np.array([token_edit_rate(c.old_text, c.new_text) for c in batch], dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "tokenization": "lower-cased words and punctuation"}


@register_judge("edit-rate.v1", "token edit rate of the rewrite (minimality)", EditRateConfig, kind="score")
def build_edit_rate(cfg: EditRateConfig, ctx: JudgeContext) -> EditRateJudge:
    return EditRateJudge()


# -- helpers shared with methods that train a label judge on data -------------------------------------
def judge_input(fields: dict[str, str], roles: Sequence[str]) -> Any:
    """What a label judge reads from a record's fields: the single text or the (premise, hypothesis) pair."""
    return fields[roles[0]] if len(roles) == 1 else tuple(fields[r] for r in roles)


def read_labelled(path: str, ctx: JudgeContext, text_col: str | None = None, label_col: str | None = None) -> list[Any]:
    """The usable records of a labelled dataset for the task (rejected rows are skipped; at least two
    labels are required)."""
    from cfaug.data.io import DataError, read_dataset
    from cfaug.data.schema import Schema

    schema = Schema(text_cols={ctx.task.roles[0]: text_col} if text_col else {}, label_col=label_col)
    try:
        data = read_dataset(path, ctx.task, schema)
    except DataError as exc:
        raise ConfigError(f"judge training data: {exc}") from None
    labels = {r.label for r in data.records}
    if len(labels) < 2:
        raise ConfigError(f"{path}: a classifier needs at least two labels in its training data; "
                          f"found {len(data.records)} usable rows with label(s) {sorted(map(str, labels)) or 'none'}")
    return data.records


GENERAL_BACKGROUND = "general"  #: name of the shipped general sentiment sample (see :func:`background_records`)


def general_background_path() -> Any:
    """The shipped general sentiment sample: 10,000 Yelp review sentences and 10,000 SST-2 training phrases,
    half negative and half positive each (``resources/sentiment/general.tsv``, made by
    ``tools/sentiment/general_sample.py``)."""
    from importlib import resources

    return resources.files("cfaug.resources") / "sentiment" / "general.tsv"


def background_records(value: str | None, ctx: JudgeContext) -> tuple[list[Any], dict[str, Any]]:
    """Labelled records to add to a label judge's training data, and what they were.

    ``value`` is ``none`` (or None: nothing), ``general`` (the shipped sample of :func:`general_background_path`;
    it is binary sentiment, so for a task whose labels are not ``negative`` and ``positive`` nothing is added
    and the facts say why) or the path of a labelled dataset in any supported format, read as
    :func:`read_labelled` reads judge training data (its labels must be the task's)."""
    if value is None or value == "none":
        return [], {}
    if value == GENERAL_BACKGROUND:
        labels = set(ctx.task.label_space.labels)
        if not {"negative", "positive"} <= labels or len(ctx.task.roles) != 1:
            return [], {"background": value, "background_rows": 0,
                        "background_skipped": f"the general sample is binary sentiment on single texts; task "
                                              f"{ctx.task.name} has labels {sorted(labels)}"}
        from importlib import resources

        with resources.as_file(general_background_path()) as path:
            records = read_labelled(str(path), ctx, "text", "label")
            prov = training_provenance(str(path), records)
    else:
        records = read_labelled(value, ctx)
        prov = training_provenance(value, records)
    return records, {"background": value, "background_rows": len(records),
                     "background_sha256": prov["train_data_sha256"]}


def training_provenance(path: str, records: Sequence[Any]) -> dict[str, Any]:
    from cfaug.data.fingerprint import hash_source

    return {"train_data": str(path), "train_data_sha256": hash_source(path), "train_rows": len(records)}


import cfaug.judges.aste_discriminators  # noqa: E402,F401  (registers t2s-fluency.v1, t2s-alignment.v1)
