"""CoBA's label check: the independent judge (``judge``: a TF-IDF model or a local classifier folder, never an
LLM), checked before any work, trained in the training stage (on the input, cross-fitted so that each row is
judged by a fold model not trained on it), loaded with its folds, and read on every rewrite: the
probability of the target goes into ``meta.own_judge`` and ``meta.confidence``, and the ``changed`` and
(with ``require_flip``) ``flip`` verdicts into the record's filters."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.records import Counterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.filters.base import record_filters
from cfaug.nlp.tokens import same_words
from cfaug.judges.builtin import judge_input
from cfaug.judges.classifier import check_classifier_folder
from cfaug.judges.registry import JudgeContext, build_judge, label_judge_spec
from cfaug.methods.coba.config import CoBAConfig
from cfaug.registry import spec_name
from cfaug.training.context import FitContext
from cfaug.training.crossfit import FoldModels


def judge_spec(c: CoBAConfig) -> Any:
    """The judge spec of ``judge`` (with ``judge_data``, ``judge_model``, ``judge_labels``); an LLM judge is
    refused."""
    spec = label_judge_spec(c.judge, data=c.judge_data, model=c.judge_model, labels=c.judge_labels, role="judge")
    jname, _ = spec_name(spec, "judges")
    if jname.startswith("llm"):
        raise ConfigError("coba's judge must be a local classifier: judge=tfidf or judge=hf")
    return spec


def check_judge_folder(spec: Any, label_space: Sequence[str]) -> None:
    """A judge given by folder (judge=hf) must name the task's labels, by itself or by ``judge_labels``
    (checked from its small JSON files; a folder that fails raises ModelPathError)."""
    jname, jparams = spec_name(spec, "judges")
    if jname.startswith("hf-classifier") and jparams.get("path"):
        check_classifier_folder(jparams["path"], labels=jparams.get("labels"), label_space=label_space,
                                what="judge_model:", flag="-p judge_labels=")


def fit_judge(spec: Any, labelled: Sequence[Record], inputs: list[Any], labels: list[str], task: Task,
              ctx: FitContext, *, folds: int, seed: int) -> dict[str, Any]:
    """Train a TF-IDF judge into the model folder (``judge-fold<f>.pkl``): cross-fitted in ``folds`` folds
    when it learns from the input (``inputs``, ``labels`` of the ``labelled`` records), one model when it
    has its own data. Another judge is not trained; the facts of the training."""
    facts: dict[str, Any] = {}
    jctx = JudgeContext(task, seed=seed, device=ctx.device)
    jname, jparams = spec_name(spec, "judges")
    if jname.startswith("tfidf"):
        own = not jparams.get("data")

        def train(rows: list[int]) -> Any:
            judge = build_judge({"C": 10.0, "min_df": 2, **spec}, jctx)
            if own:
                x, y = [inputs[n] for n in rows], [labels[n] for n in rows]
                try:
                    judge.fit(x, y)
                except ValueError as exc:  # a handful of texts share no word: keep every word instead
                    if "no terms remain" not in str(exc) or "min_df" in spec:
                        raise
                    judge = build_judge({"C": 10.0, "min_df": 1, **spec}, jctx)
                    judge.fit(x, y)
            return judge

        fold_models = FoldModels.fit([r.id for r in labelled], labels, folds if own else 1, train,
                                     ctx.artifact_dir, "judge-fold")
        if fold_models.note:
            facts["judge_folds_note"] = fold_models.note
            ctx.log(f"warning: coba's label judge is {fold_models.note}. Train the judge on other labelled data "
                    "with -p judge_data=FILE, or give more rows of each label")
        facts["judge_folds"] = fold_models.k
    return facts


def load_judges(artifact_dir: Path, spec: Any, task: Task, *, seed: int, device: str) -> FoldModels:
    """The judge's fold models saved by :func:`fit_judge`, else the one judge ``spec`` builds."""
    judges = FoldModels.load(artifact_dir, "judge-fold")
    if not judges:
        judges = FoldModels([build_judge(spec, JudgeContext(task, seed=seed, device=device))])
    return judges


def target_probs(judges: FoldModels, task: Task, items: Sequence[WorkItem],
                 fields: Sequence[dict[str, str]]) -> list[float]:
    """The judge's probability of each item's target (cross-fitted: the fold model not trained on it)."""
    out = [0.0] * len(items)
    for judge, idx in judges.groups([it.record.id for it in items]):
        probs = judge.predict_proba([judge_input(fields[n], task.roles) for n in idx])
        labels = list(judge.labels)
        for n, p in zip(idx, probs):
            out[n] = float(p[labels.index(items[n].target)]) if items[n].target in labels else 0.0
    return out


def check_rewrites(judges: FoldModels, task: Task, items: Sequence[WorkItem], rewrites: Sequence[Counterfactual], *,
                   min_target_prob: float, require_flip: bool) -> None:
    """Score every rewrite (of the item beside it) with the judge and record its verdict."""
    probs = target_probs(judges, task, items, [cf.fields for cf in rewrites])
    for item, cf, p in zip(items, rewrites, probs):
        record_verdict(cf, p, item.record.fields, judge_name=getattr(judges[0], "name", "judge"),
                       min_target_prob=min_target_prob, require_flip=require_flip)


def record_verdict(cf: Counterfactual, target_prob: float, original: dict[str, str], *, judge_name: str,
                   min_target_prob: float, require_flip: bool) -> None:
    """Write the judge's reading of ``cf`` into its meta and its filter verdicts (``changed``, and ``flip``
    with ``require_flip``)."""
    flipped = target_prob >= min_target_prob
    cf.meta["own_judge"] = {"name": judge_name, "target_prob": round(target_prob, 4),
                            "flipped": flipped, "threshold": min_target_prob}
    cf.meta["confidence"] = round(target_prob, 4)
    changed = any(not same_words(cf.fields[r], original[r]) for r in original)
    verdicts: dict[str, bool | None] = {"changed": changed}
    notes = {} if changed else {"changed": "the rewrite equals the original"}
    if require_flip:
        verdicts["flip"] = flipped
    record_filters(cf.meta, verdicts, notes)


__all__ = ["check_judge_folder", "check_rewrites", "fit_judge", "judge_spec", "load_judges", "record_verdict",
           "target_probs"]
