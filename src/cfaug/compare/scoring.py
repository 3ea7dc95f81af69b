"""Every method's output scored the same way: one independent judge for all, and the metric suite of
``cfaug evaluate`` (:func:`cfaug.evaluate.suite.evaluate`) with one :class:`EvaluationConfig`.

The judge is never one a method optimised against:

- ``--judge DIR``: a local Hugging Face sequence classifier;
- ``--judge-train FILE``: a TF-IDF logistic regression cfaug trains on that labelled file (trained once,
  for every method);
- neither: a TF-IDF logistic regression cross-fitted on the sample (:class:`~cfaug.training.crossfit.FoldModels`,
  up to :data:`CROSSFIT_FOLDS` folds by row id): each counterfactual is judged by the fold model that was
  not trained on its original.

The suite itself runs without a judge (its models are loaded once for every method still to score); the
flip rate and H from this judge are added to each method's group, so ``scores/<method>.json`` reads like
the ``metrics.json`` of ``cfaug evaluate`` with a ``compare`` section of extras (coverage, the judge's
verdict on each counterfactual, the figures of the summary table). A method's scores are kept while its
output, the judge and the evaluation settings stay the same.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfaug.data.records import Record
from cfaug.data.tasks import Task
from cfaug.evaluate.pairs import CounterfactualPair, PairSet, load_pairs
from cfaug.evaluate.result import MetricResult
from cfaug.evaluate.suite import NO_JUDGE_NOTE, EvaluationConfig

SCORES = "scores"
CROSSFIT_FOLDS = 5


@dataclass
class JudgeSpec:
    """Which independent judge: ``path`` (HF classifier folder), ``train_data`` (labelled file), or
    neither (cross-fitted on the sample)."""

    path: str | None = None
    labels: Sequence[str] | None = None
    train_data: str | None = None
    model: str = "logreg"
    text_col: str | None = None
    label_col: str | None = None
    seed: int = 0

    @property
    def kind(self) -> str:
        return "local classifier" if self.path else "trained on --judge-train" if self.train_data else \
            "cross-fitted on the sample"

    def key(self, sample_sha: str) -> str:
        from cfaug.data.fingerprint import hash_source

        if self.path:
            src = {"path": str(Path(self.path).resolve()), "labels": list(self.labels or [])}
        elif self.train_data:
            src = {"train": hash_source(self.train_data), "text_col": self.text_col, "label_col": self.label_col}
        else:
            src = {"sample": sample_sha}
        return json.dumps({"kind": self.kind, "model": self.model, "seed": self.seed, **src}, sort_keys=True)


class Judge:
    """The built judge: :meth:`verdicts` routes each pair to a model (the fold model that never saw its
    original, for a cross-fitted judge)."""

    def __init__(self, models: Any, info: dict[str, Any], seen: set[str], folds: Any = None) -> None:
        self.model, self.info, self.seen, self.folds = models, info, seen, folds

    def verdicts(self, pairs: Sequence[CounterfactualPair], task: Task) -> tuple[list[str], list[float]]:
        from cfaug.evaluate.flip_rate import judge_verdicts

        if self.folds is None:
            return judge_verdicts(pairs, self.model, task.label_space)
        predicted: list[str] = [""] * len(pairs)
        prob: list[float] = [0.0] * len(pairs)
        for model, idx in self.folds.groups([p.source_id for p in pairs]):
            pr, tp = judge_verdicts([pairs[i] for i in idx], model, task.label_space)
            for i, a, b in zip(idx, pr, tp):
                predicted[i], prob[i] = a, b
        return predicted, prob


def build_judge(spec: JudgeSpec, task: Task, sample: Sequence[Record], data_sha: str | None,
                log: Callable[[str], None]) -> Judge | None:
    """The judge of :class:`JudgeSpec`; None (with a log line) when a cross-fitted one cannot be trained
    (fewer than two labels in the sample)."""
    if spec.path or spec.train_data:
        from cfaug.evaluate.flip_rate import JudgeChoice
        from cfaug.evaluate.flip_rate import build_judge as build_eval_judge

        log(f"preparing the flip-rate judge ({spec.kind})")
        choice = JudgeChoice(path=spec.path, labels=spec.labels, train_data=spec.train_data, model=spec.model,
                             text_col=spec.text_col, label_col=spec.label_col, seed=spec.seed)
        model, info, seen = build_eval_judge(choice, task)
        info = {**info, "kind": spec.kind, "independent": True}
        if data_sha and info.get("train_data_sha256") == data_sha:
            info["independent"] = False
            info["note"] = "trained on the same data the methods read; not independent"
        return Judge(model, info, seen)
    from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
    from cfaug.training.crossfit import FoldModels

    role = task.edit_roles[0]
    keys = [r.id for r in sample]
    labels = [str(r.label) for r in sample]
    if len(set(labels)) < 2:
        log("flip rate: not measured: the sample holds one label, and no --judge-train or --judge was given")
        return None
    texts = [r.fields[role] if len(task.roles) == 1 else tuple(r.fields[k] for k in task.roles) for r in sample]

    def train(idx: list[int]) -> Any:
        return TfidfLinearJudge(spec.model, seed=spec.seed).fit([texts[i] for i in idx], [labels[i] for i in idx])

    log(f"preparing the flip-rate judge (TF-IDF {spec.model} cross-fitted on the {len(sample)} sampled rows)")
    folds = FoldModels.fit(keys, labels, CROSSFIT_FOLDS, train, None, "fold")  # kept in memory: seconds to fit
    if folds.note:
        log(f"flip-rate judge: {folds.note}")
    info = {"judge_source": "trained by cfaug", "kind": spec.kind, "judge": f"tfidf-{spec.model}",
            "independent": folds.k > 1, "folds": folds.k, "train_rows": len(sample), "seed": spec.seed,
            "note": folds.note or f"each counterfactual judged by the fold model not trained on its original "
                                  f"({folds.k} folds by row id)"}
    return Judge(None, info, set(), folds)


@dataclass
class MethodScores:
    """The figures of one method (the summary table's columns) and where its full scores are."""

    method: str
    rows: int
    counterfactuals: int
    coverage: float | None = None
    flipped_coverage: float | None = None
    flip_rate: float | None = None
    edit_rate: float | None = None
    minimality: float | None = None
    similarity: float | None = None
    similarity_metric: str | None = None
    fluency: dict[str, Any] | None = None
    diversity: float | None = None
    h: float | None = None
    pairs: list[CounterfactualPair] = field(default_factory=list, repr=False)
    reused: bool = False

    def figures(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("rows", "counterfactuals", "coverage", "flipped_coverage",
                                               "flip_rate", "edit_rate", "minimality", "similarity",
                                               "similarity_metric", "fluency", "diversity", "h")}


def method_pairs(run_dir: Path, name: str, task: Task) -> list[CounterfactualPair]:
    """The counterfactuals a method wrote (filter-rejected candidates left out), labelled with ``name``."""
    pairs = load_pairs(run_dir, task).pairs
    return [dataclasses.replace(p, method=name) for p in pairs if p.passed]


def score_key(output_sha: str, judge_key: str, config: EvaluationConfig, sample_sha: str) -> str:
    blob = json.dumps({"output": output_sha, "judge": judge_key, "config": dataclasses.asdict(config),
                       "sample": sample_sha}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def score_methods(out_dir: Path, methods: dict[str, Path], task: Task, sample: Sequence[Record], sample_sha: str,
                  spec: JudgeSpec, config: EvaluationConfig, data_sha: str | None, log: Callable[[str], None],
                  progress: bool = False) -> tuple[dict[str, MethodScores], dict[str, Any]]:
    """Score each method (name -> its run directory, absolute); returns the figures by method and the
    judge's description. Each method's full result goes to ``out_dir/scores/<method>.json``."""
    from cfaug.data.fingerprint import hash_source

    scores_dir = out_dir / SCORES
    scores_dir.mkdir(parents=True, exist_ok=True)
    judge_key = spec.key(sample_sha)
    sample_ids = {r.id for r in sample}
    out: dict[str, MethodScores] = {}
    todo: dict[str, tuple[str, list[CounterfactualPair]]] = {}
    judge_info: dict[str, Any] | None = None
    for name, run_dir in methods.items():
        output = run_dir / "counterfactuals.jsonl"
        key = score_key(hash_source(output) if output.exists() else "", judge_key, config, sample_sha)
        path = scores_dir / f"{name}.json"
        kept = _read(path)
        if kept and kept.get("compare", {}).get("key") == key:
            out[name] = _from_saved(name, kept["compare"])
            judge_info = judge_info or kept["compare"].get("judge")
            log(f"{name}: scores kept from an earlier run ({path})")
            continue
        pairs = [p for p in method_pairs(run_dir, name, task) if p.source_id in sample_ids]
        todo[name] = (key, pairs)
    if not todo:
        return out, judge_info or {"kind": spec.kind}
    judge = build_judge(spec, task, sample, data_sha, log)
    all_pairs = [p for _, pairs in todo.values() for p in pairs]
    predicted: list[str] = []
    target_prob: list[float] = []
    if judge is not None and all_pairs:
        predicted, target_prob = judge.verdicts(all_pairs, task)
        if judge.seen:
            from cfaug.evaluate.flip_rate import training_overlap

            overlap = training_overlap([r.fields[task.edit_roles[0]] for r in sample], judge.seen)
            judge.info["originals_in_judge_training"] = round(overlap, 4)
            if overlap > 0:
                log(f"warning: {overlap:.1%} of the sampled originals are in the judge's training data; a judge "
                    "that memorised them biases the flip rate down (train it on other data)")
    judge_info = judge.info if judge is not None else {"kind": spec.kind, "note": "no judge: flip rate not measured"}
    result: dict[str, Any] = {}
    if all_pairs:
        from cfaug.evaluate.suite import evaluate

        quiet = NO_JUDGE_NOTE[:40]  # the suite runs without a judge: the flip rate comes from this one
        result = evaluate(PairSet(all_pairs, [], str(out_dir), task), config,
                          log=lambda m: None if m.startswith(quiet) else log(m), progress=progress)
        result["notes"] = [n for n in result.get("notes", []) if not n.startswith(NO_JUDGE_NOTE[:40])]
    start = 0
    for name, (key, pairs) in todo.items():
        pred = predicted[start: start + len(pairs)] if predicted else None
        prob = target_prob[start: start + len(pairs)] if predicted else None
        start += len(pairs)
        group = (result.get("groups") or {}).get(name)
        ms, saved = _method_result(name, key, pairs, pred, prob, group, result, judge_info, len(sample))
        _write(scores_dir / f"{name}.json", saved)
        out[name] = ms
    return out, judge_info


def _method_result(name: str, key: str, pairs: list[CounterfactualPair], predicted: list[str] | None,
                   target_prob: list[float] | None, group: dict[str, Any] | None, result: dict[str, Any],
                   judge_info: dict[str, Any], rows: int) -> tuple[MethodScores, dict[str, Any]]:
    from cfaug.evaluate.flip_rate import flip_rate_from_predictions
    from cfaug.evaluate.harmonic import h_score

    ms = MethodScores(name, rows, len(pairs), pairs=pairs)
    covered = {p.source_id for p in pairs}
    ms.coverage = len(covered) / rows if rows else None
    group = json.loads(json.dumps(group)) if group else {"n": 0, "metrics": [], "items": [], "per_item": {}}
    metrics = {m["name"]: m for m in group["metrics"]}
    judgements: list[dict[str, Any]] = []
    if predicted is not None and pairs:
        flip = flip_rate_from_predictions(predicted, [p.target for p in pairs], {"independent": True, **judge_info})
        content_json = metrics.get("bertscore_f1") or metrics.get("embedding_cosine")
        new = [flip.to_json()]
        if content_json:
            content = MetricResult(content_json["name"], content_json["value"], content_json["n"],
                                   content_json["settings"])
            new.append(h_score(content, flip).to_json())
        group["metrics"] = new + group["metrics"]
        group["per_item"]["flip_rate"] = flip.per_item
        metrics = {m["name"]: m for m in group["metrics"]}
        ms.flip_rate = flip.value
        ms.flipped_coverage = len({p.source_id for p, y in zip(pairs, predicted) if y == p.target}) / rows \
            if rows else None
        judgements = [{"source_id": p.source_id, "item": p.item_id, "target": p.target, "predicted": y,
                       "target_prob": round(float(pr), 6), "flipped": y == p.target}
                      for p, y, pr in zip(pairs, predicted, target_prob or [])]
    ms.edit_rate = _value(metrics, "edit_rate")
    rates = (group.get("per_item") or {}).get("edit_rate") or []
    kept = [max(0.0, 1.0 - r) for r in rates if r is not None]
    ms.minimality = sum(kept) / len(kept) if kept else None
    for sim in ("embedding_cosine", "bertscore_f1"):
        if _value(metrics, sim) is not None:
            ms.similarity, ms.similarity_metric = _value(metrics, sim), sim
            break
    for flu in ("perplexity", "ngram_perplexity"):
        if flu in metrics and metrics[flu]["value"] is not None:
            ms.fluency = {"name": flu, "value": metrics[flu]["value"],
                          "originals": (metrics[flu].get("details") or {}).get("originals_perplexity")}
            break
    ms.diversity = _value(metrics, "distinct_2")
    ms.h = _value(metrics, "h")
    flipped_rows = sorted({j["source_id"] for j in judgements if j["flipped"]}) if predicted is not None else None
    extras = {"key": key, "method": name, "judge": judge_info, **ms.figures(),
              "definitions": DEFINITIONS, "judgements": judgements,
              "covered_rows": sorted(covered), "flipped_rows": flipped_rows}
    saved = {k: v for k, v in result.items() if k != "groups"}
    saved.update({"pairs_read": len(pairs), "pairs_scored": len(pairs), "groups": {name: group}, "compare": extras})
    return ms, saved


#: what each figure of the summary is (also in each scores file)
DEFINITIONS = {
    "coverage": "share of sampled rows with at least one counterfactual in the method's output",
    "flipped_coverage": "share of sampled rows with at least one counterfactual the independent judge gives "
                        "its target label",
    "flip_rate": "share of counterfactuals the independent judge gives their target label",
    "edit_rate": "mean token Levenshtein distance / original token count (lower: smaller edits)",
    "minimality": "mean of max(0, 1 - edit rate) per counterfactual: share of the original left as it was",
    "similarity": "mean embedding cosine of original and counterfactual (BERTScore-style F1 without embeddings)",
    "fluency": "perplexity of the counterfactuals (and of their originals) under the suite's language model; "
               "lower reads more like the reference text",
    "diversity": "distinct-2 over the method's counterfactuals (higher: more varied)",
}


def row_outcomes(out_dir: Path, name: str) -> dict[str, set[str]] | None:
    """The sampled rows a scored method succeeded on, per figure of the ranking, from
    ``scores/<name>.json``: ``coverage`` (rows with a counterfactual) and, with a judge,
    ``flipped_coverage`` (rows with one the judge gives its target label); None without a scores file."""
    saved = _read(out_dir / SCORES / f"{name}.json")
    extras = (saved or {}).get("compare")
    if not isinstance(extras, dict):
        return None
    judgements = [j for j in extras.get("judgements") or [] if isinstance(j, dict)]
    out: dict[str, set[str]] = {}
    covered = extras.get("covered_rows")
    if isinstance(covered, list):
        out["coverage"] = {str(i) for i in covered}
    elif judgements or extras.get("counterfactuals") == 0:  # (scores written before the rows were kept)
        out["coverage"] = {str(j["source_id"]) for j in judgements}
    flipped = extras.get("flipped_rows")
    if isinstance(flipped, list):
        out["flipped_coverage"] = {str(i) for i in flipped}
    elif judgements:
        out["flipped_coverage"] = {str(j["source_id"]) for j in judgements if j.get("flipped")}
    return out


def _value(metrics: dict[str, Any], name: str) -> float | None:
    m = metrics.get(name)
    return None if m is None else m.get("value")


def _from_saved(name: str, extras: dict[str, Any]) -> MethodScores:
    ms = MethodScores(name, int(extras.get("rows", 0)), int(extras.get("counterfactuals", 0)), reused=True)
    for k in ("coverage", "flipped_coverage", "flip_rate", "edit_rate", "minimality", "similarity",
              "similarity_metric", "fluency", "diversity", "h"):
        setattr(ms, k, extras.get(k))
    return ms


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, obj: Any) -> None:
    from cfaug.run.outputs import write_text_atomic

    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")
