"""Run the chosen metrics over a set of counterfactual pairs, per method, and collect one JSON-ready
result that names every setting."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cfaug.evaluate.content import bertscore, embedding_cosine
from cfaug.evaluate.diversity import distinct_n, self_bleu
from cfaug.evaluate.flip_rate import JudgeChoice, build_judge, flip_rate, own_judge_flip_rate, training_overlap
from cfaug.evaluate.fluency import CausalLMScorer, ngram_perplexity, perplexity
from cfaug.evaluate.harmonic import h_score
from cfaug.evaluate.minimality import edit_rate, mover_distance
from cfaug.evaluate.ngram_lm import NgramLM
from cfaug.evaluate.pairs import CounterfactualPair, PairSet
from cfaug.evaluate.result import MetricResult
from cfaug.evaluate.rouge import rouge
from cfaug.data.fingerprint import versions

ALL_METHODS = "(all)"


@dataclass
class EvaluationConfig:
    """Which metrics to compute and with what. Model-free metrics (edit rate, Self-BLEU, distinct-n)
    always run; each model-based metric runs when its model is named or enabled.

    ``judge``: the independent flip-rate judge (none: no flip rate, unless ``own_judge``).
    ``own_judge``: also report the generator's own judge (labelled as not independent).
    ``embedding`` / ``encoder``: sentence-embedding cosine, with a local sentence-transformers folder
    (default: the packaged all-MiniLM-L6-v2). ``bertscore`` / ``token_encoder``: BERTScore-style F1 with
    a local transformer (default: the packaged MiniLM's transformer). ``mover_encoder``: MoverScore-like
    distance with that local encoder. ``lm``: perplexity under a local causal LM (``lm_add_bos``: prepend
    BOS). ``ngram_reference``: fallback fluency, an n-gram model trained on this corpus (a dataset file
    read with the task's columns). ``rouge_reference``: ``"original"`` or a column holding references.
    ``include_failed``: also score candidates a generation filter rejected.
    """

    judge: JudgeChoice | None = None
    own_judge: bool = False
    embedding: bool = True
    encoder: str | None = None
    bertscore: bool = True
    token_encoder: str | None = None
    mover_encoder: str | None = None
    lm: str | None = None
    lm_add_bos: bool = True
    ngram_reference: str | None = None
    ngram_order: int = 3
    self_bleu_max_n: int = 4
    distinct: tuple[int, ...] = (1, 2)
    rouge_reference: str | None = None
    include_failed: bool = False
    per_method: bool = True


@dataclass
class _Models:
    judge: Any = None
    judge_info: dict[str, Any] = field(default_factory=dict)
    encoder: Any = None
    tokens: Any = None
    mover: Any = None
    lm: Any = None
    ngram: Any = None


def evaluate(pairset: PairSet, config: EvaluationConfig, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Metrics for ``pairset``: one group per method (plus ``(all)`` when there are several)."""
    log = log or (lambda m: None)
    start = time.perf_counter()
    models = _load_models(pairset, config, log)
    pairs = [p for p in pairset.pairs if config.include_failed or p.passed]
    groups: dict[str, list[CounterfactualPair]] = {}
    methods = sorted({p.method for p in pairs})
    if config.per_method and len(methods) > 1:
        for m in methods:
            groups[m] = [p for p in pairs if p.method == m]
    groups[ALL_METHODS if len(methods) != 1 else methods[0]] = pairs
    out_groups = {}
    for name, group in groups.items():
        log(f"scoring {len(group)} counterfactuals ({name or 'no method name'})")
        results = _score(group, pairset, config, models)
        out_groups[name] = {
            "n": len(group),
            "metrics": [r.to_json() for r in results],
            "items": [{"source_id": p.source_id, "target": p.target, "passed": p.passed} for p in group],
            "per_item": {r.name: r.to_json(include_items=True).get("per_item") for r in results
                         if r.per_item is not None},
        }
    settings = asdict(config)
    return {
        "source": pairset.source,
        "task": pairset.task.name,
        "pairs_read": len(pairset.pairs),
        "pairs_scored": len(pairs),
        "rows_rejected": len(pairset.rejects),
        "rejects": [r.message() for r in pairset.rejects[:50]],
        "config": settings,
        "groups": out_groups,
        "versions": versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - start, 2),
    }


def _load_models(pairset: PairSet, config: EvaluationConfig, log: Callable[[str], None]) -> _Models:
    m = _Models()
    if config.judge is not None:
        log("preparing the flip-rate judge")
        m.judge, m.judge_info, seen = build_judge(config.judge, pairset.task)
        run_input = (pairset.run_config or {}).get("input_hash")
        if run_input and m.judge_info.get("train_data_sha256") == run_input:
            m.judge_info["independent"] = False
            m.judge_info["note"] = "trained on the same data the generator read; not independent"
        if seen:
            overlap = training_overlap([p.original for p in pairset.pairs], seen)
            m.judge_info["originals_in_judge_training"] = round(overlap, 4)
            if overlap > 0:
                log(f"warning: {overlap:.0%} of the originals are in the judge's training data; a judge that "
                    "memorised them biases the flip rate down (train it on other data)")
    if config.embedding:
        from cfaug.judges.similarity import SentenceEncoder

        log("loading the sentence encoder")
        m.encoder = SentenceEncoder(config.encoder)
    if config.bertscore or config.mover_encoder:
        from cfaug.judges.token_embeddings import TokenEncoder

        if config.bertscore:
            m.tokens = TokenEncoder(config.token_encoder)
        if config.mover_encoder:
            same = m.tokens is not None and m.tokens.path.resolve() == Path(config.mover_encoder).resolve()
            m.mover = m.tokens if same else TokenEncoder(config.mover_encoder)
    if config.lm:
        log("loading the language model")
        m.lm = CausalLMScorer(config.lm, add_bos=config.lm_add_bos)
    if config.ngram_reference:
        from cfaug.data.io import read_dataset

        data = read_dataset(config.ngram_reference, pairset.task)
        role = pairset.task.edit_roles[0]
        m.ngram = NgramLM(config.ngram_order).fit(r.fields[role] for r in data.records)
    return m


def _score(group: list[CounterfactualPair], pairset: PairSet, config: EvaluationConfig, m: _Models) -> list[MetricResult]:
    orig = [p.original for p in group]
    new = [p.counterfactual for p in group]
    results: list[MetricResult] = []
    flip = None
    if m.judge is not None:
        info = {"independent": True, **m.judge_info}
        flip = flip_rate(group, m.judge, pairset.task.label_space, info)
        results.append(flip)
    if config.own_judge:
        results.append(own_judge_flip_rate(group))
    content = None
    if m.encoder is not None:
        content = embedding_cosine(orig, new, m.encoder)
        results.append(content)
    if m.tokens is not None:
        content = bertscore(orig, new, m.tokens)
        results.append(content)
    if flip is not None and content is not None:
        results.append(h_score(content, flip))
    results.append(edit_rate(orig, new))
    if m.mover is not None:
        results.append(mover_distance(orig, new, m.mover))
    if m.lm is not None:
        results.append(perplexity(new, m.lm))
    if m.ngram is not None:
        ng = ngram_perplexity(new, m.ngram)
        ng.settings["reference_file"] = config.ngram_reference
        results.append(ng)
    results.append(self_bleu(new, max_n=config.self_bleu_max_n))
    for n in config.distinct:
        results.append(distinct_n(new, n))
    if config.rouge_reference:
        if config.rouge_reference == "original":
            refs = orig
        else:
            missing = [p.source_id for p in group if config.rouge_reference not in p.columns]
            if missing:
                raise ValueError(f"no column {config.rouge_reference!r} for ROUGE references "
                                 f"(first missing in source {missing[0]!r})")
            refs = [str(p.columns[config.rouge_reference]) for p in group]
        r = rouge(new, refs)
        r.settings["reference"] = config.rouge_reference
        results.append(r)
    return results
