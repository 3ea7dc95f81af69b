"""Run the chosen metrics over a set of counterfactual pairs, per method, and collect one JSON-ready
result that names every setting.

The model-based per-pair figures (judge predictions, embedding cosine, BERTScore-style F1, MoverScore
distance, perplexity) are computed once per distinct pair over all scored pairs, with a progress bar each,
and every group (each method and ``(all)``) takes its share. The encoders read the pairs in blocks of
similar length (less padding), and a text both content metrics need is encoded once where the two
encoders share a transformer (:mod:`cfaug.evaluate.encoding`). The result says where the time went
(``timings``, seconds per stage) and how many texts each encoder read (``encoding``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cfaug.evaluate.content import bertscore_items, bertscore_result, embedding_cosine_result
from cfaug.evaluate.diversity import distinct_n, self_bleu
from cfaug.evaluate.encoding import SharedEncoding
from cfaug.evaluate.flip_rate import (JudgeChoice, build_judge, flip_rate_from_predictions, judge_verdicts,
                                      own_judge_flip_rate, training_overlap)
from cfaug.evaluate.fluency import CausalLMScorer, ngram_perplexity, perplexity_result
from cfaug.evaluate.harmonic import h_score
from cfaug.evaluate.minimality import edit_rate, mover_result
from cfaug.judges.ngram_lm import NgramLM
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
    distance with that local encoder. ``lm``: perplexity under a causal LM, a local folder or a packaged
    GGUF model's name or ``.gguf`` path (:func:`~cfaug.judges.causal_lm.resolve_causal_lm`; ``lm_add_bos``:
    prepend BOS). ``ngram_reference``: offline fluency, an n-gram model trained on this corpus (a dataset file read
    with the task's columns); ``"auto"`` (the default) is the shipped sample of 20,000 review sentences
    (:data:`GENERAL_REFERENCE`) for sentiment and rating tasks and nothing for other tasks; ``None`` or
    ``"none"``: no n-gram fluency. ``rouge_reference``: ``"original"`` or a column holding references.
    ``include_failed``: also score candidates a generation filter rejected.
    ``precision``: float type of the sentence and token encoders (``auto``: bfloat16 where the hardware
    computes it natively, else float32; ``float32`` for values that do not depend on the machine).
    ``token_window``: the token encoder's window in word pieces (default 256, the packaged encoder's own
    ``max_seq_length``; then every text's sentence embedding comes from the same forward pass).
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
    ngram_reference: str | None = "auto"
    ngram_order: int = 3
    self_bleu_max_n: int = 4
    distinct: tuple[int, ...] = (1, 2)
    rouge_reference: str | None = None
    include_failed: bool = False
    per_method: bool = True
    precision: str = "auto"
    token_window: int = 256


@dataclass
class _Models:
    judge: Any = None
    judge_info: dict[str, Any] = field(default_factory=dict)
    encoder: Any = None
    tokens: Any = None
    mover: Any = None
    lm: Any = None
    ngram: Any = None


#: distinct pairs the encoders read at a time (sorted by length; one progress step per block)
PAIR_BLOCK = 64
#: counterfactuals the flip-rate judge classifies at a time
JUDGE_BLOCK = 256

#: ``ngram_reference`` name of the shipped reference: 10,000 Yelp review sentences and 10,000 SST-2 movie-review
#: phrases (``resources/sentiment/general.tsv``, lower-cased and tokenized)
GENERAL_REFERENCE = "general"
#: what the result says when no fluency scorer ran (also logged)
NO_FLUENCY_NOTE = ("fluency: not measured: pass --lm MODEL (a local causal language model folder, or a packaged "
                   "GGUF model such as smollm2-135m-instruct: perplexity) or "
                   "--ngram-reference FILE (an n-gram model trained on that text); the shipped review-sentence "
                   "reference serves sentiment and rating tasks only")


def general_sentences() -> list[str]:
    """The texts of the shipped review-sentence sample (:data:`GENERAL_REFERENCE`)."""
    import csv

    from cfaug.judges.builtin import general_background_path

    with general_background_path().open(encoding="utf-8", newline="") as fh:
        return [row["text"] for row in csv.DictReader(fh, delimiter="\t")]


def ngram_reference_for(config: EvaluationConfig, task_name: str) -> str | None:
    """The n-gram reference a run uses: a path, :data:`GENERAL_REFERENCE`, or None."""
    ref = config.ngram_reference
    if ref is None or str(ref).lower() == "none":
        return None
    if ref == "auto":
        return GENERAL_REFERENCE if task_name in ("sentiment", "rating") else None
    return str(ref)


#: what the result says when no independent judge was named (also logged)
NO_JUDGE_NOTE = ("flip rate: not computed (and so no H): no judge was given. Pass --judge-train DATA (cfaug trains "
                 "a TF-IDF judge on that labelled dataset; best other data than the generator read) or "
                 "--judge DIR (a local Hugging Face sequence classifier); in Python: "
                 "EvaluationConfig(judge=JudgeChoice(...))")


def evaluate(pairset: PairSet, config: EvaluationConfig, log: Callable[[str], None] | None = None,
             progress: bool = False, judgements: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Metrics for ``pairset``: one group per method (plus ``(all)`` when there are several).
    ``progress``: tqdm bars on stderr for the model-based stages (judge, encoders, language model).
    ``judgements``: a list that receives the independent judge's verdict on each scored pair (see
    :func:`cfaug.evaluate.judgements.judgement_rows`; nothing when no judge ran)."""
    log = log or (lambda m: None)
    start = time.perf_counter()
    timings: dict[str, float] = {}
    notes = []
    if config.judge is None:
        notes.append(NO_JUDGE_NOTE + (" (--own-judge reports only the generator's own judge, which is not "
                                      "independent)" if config.own_judge else ""))
    if not config.lm and ngram_reference_for(config, pairset.task.name) is None:
        notes.append(NO_FLUENCY_NOTE)
    for note in notes:
        log(note)
    with _timed(timings, "load models"):
        models = _load_models(pairset, config, log)
    pairs = [p for p in pairset.pairs if config.include_failed or p.passed]
    if config.rouge_reference and config.rouge_reference != "original":  # before the slow stages
        missing = [p.source_id for p in pairs if config.rouge_reference not in p.columns]
        if missing:
            raise ValueError(f"no column {config.rouge_reference!r} for ROUGE references "
                             f"(first missing in source {missing[0]!r})")
    groups: dict[str, list[int]] = {}
    methods = sorted({p.method for p in pairs})
    if config.per_method and len(methods) > 1:
        for m in methods:
            groups[m] = [i for i, p in enumerate(pairs) if p.method == m]
    groups[ALL_METHODS if len(methods) != 1 else methods[0]] = list(range(len(pairs)))
    log(f"scoring {len(pairs)} counterfactuals" + (f" ({', '.join(groups)})" if len(groups) > 1 else ""))
    items = _per_pair(pairs, pairset, models, timings, progress)
    if judgements is not None and items.predicted is not None:
        from cfaug.evaluate.judgements import judgement_rows

        judgements.extend(judgement_rows(pairs, items.predicted, items.target_prob or [], models.judge_info))
    out_groups = {}
    for name, idx in groups.items():
        group = [pairs[i] for i in idx]
        results = _score(group, idx, items, pairset, config, models, timings)
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
        "notes": notes,
        "groups": out_groups,
        "versions": versions(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seconds": round(time.perf_counter() - start, 2),
        "timings": {k: round(v, 2) for k, v in timings.items()},
        "encoding": items.encoding,
    }


@contextmanager
def _timed(timings: dict[str, float], name: str) -> Iterator[None]:
    t = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - t


def _bar(enabled: bool, total: int, desc: str) -> Any:
    """A tqdm progress bar on stderr counting counterfactuals (silent unless ``enabled``)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="cf", disable=not enabled, file=sys.stderr, dynamic_ncols=True)


@dataclass
class _PerPair:
    """Model-based figures computed once for all scored pairs: judge predictions by pair index, content
    and mover figures by (original, counterfactual), token NLLs by counterfactual text."""

    predicted: list[str] | None = None
    target_prob: list[float] | None = None
    cosine: dict[tuple[str, str], float] = field(default_factory=dict)
    bert: dict[tuple[str, str], tuple[float, float, float]] = field(default_factory=dict)
    mover: dict[tuple[str, str], float] = field(default_factory=dict)
    nll: dict[str, tuple[float, int]] = field(default_factory=dict)
    encoding: dict[str, Any] | None = None


def _per_pair(pairs: list[CounterfactualPair], pairset: PairSet, m: _Models, timings: dict[str, float],
              progress: bool) -> _PerPair:
    from cfaug.judges.mover import mover_score

    out = _PerPair()
    if m.judge is not None:
        out.predicted, out.target_prob = [], []
        with _timed(timings, "flip_rate (judge)"), _bar(progress, len(pairs), "flip-rate judge") as bar:
            for start in range(0, len(pairs), JUDGE_BLOCK):
                block = pairs[start: start + JUDGE_BLOCK]
                predicted, target_prob = judge_verdicts(block, m.judge, pairset.task.label_space)
                out.predicted += predicted
                out.target_prob += target_prob
                bar.update(len(block))
    if m.encoder is not None or m.tokens is not None or m.mover is not None:
        keys = list(dict.fromkeys((p.original, p.counterfactual) for p in pairs))
        keys.sort(key=lambda k: len(k[0]) + len(k[1]))  # similar lengths in a block: less padding
        shared = SharedEncoding(m.encoder, m.tokens, m.mover)
        with _bar(progress, len(keys), "encoding (content, minimality)") as bar:
            for start in range(0, len(keys), PAIR_BLOCK):
                block = keys[start: start + PAIR_BLOCK]
                orig, new = [k[0] for k in block], [k[1] for k in block]
                shared.encode(orig + new)
                if m.encoder is not None:
                    with _timed(timings, "embedding_cosine"):
                        out.cosine.update(zip(block, (float(x) for x in m.encoder.cosine(orig, new))))
                if m.tokens is not None:
                    with _timed(timings, "bertscore_f1 (matching)"):
                        out.bert.update(zip(block, bertscore_items(orig, new, m.tokens)))
                if m.mover is not None:
                    with _timed(timings, "mover_distance (transport)"):
                        out.mover.update(zip(block, mover_score(m.mover, orig, new)))
                bar.update(len(block))
        for stage, seconds in shared.seconds.items():
            timings[f"encode: {stage}"] = seconds
        out.encoding = shared.stats()
    if m.lm is not None:
        texts = list(dict.fromkeys(p.counterfactual for p in pairs))
        with _timed(timings, "perplexity"), _bar(progress, len(texts), "perplexity") as bar:
            for t in texts:
                out.nll[t] = m.lm.token_nll(t)
                bar.update(1)
    return out


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
                log(f"warning: {overlap:.1%} of the originals are in the judge's training data; a judge that "
                    "memorised them biases the flip rate down (train it on other data)")
    if config.embedding:
        from cfaug.judges.similarity import SentenceEncoder

        log("loading the sentence encoder")
        m.encoder = SentenceEncoder(config.encoder, precision=config.precision)
    if config.bertscore or config.mover_encoder:
        from cfaug.judges.token_embeddings import TokenEncoder

        if config.bertscore:
            m.tokens = TokenEncoder(config.token_encoder, max_length=config.token_window, precision=config.precision)
        if config.mover_encoder:
            same = m.tokens is not None and m.tokens.path.resolve() == Path(config.mover_encoder).resolve()
            m.mover = m.tokens if same else TokenEncoder(config.mover_encoder, max_length=config.token_window,
                                                          precision=config.precision)
    if config.lm:
        log("loading the language model")
        m.lm = CausalLMScorer(config.lm, add_bos=config.lm_add_bos)
    reference = ngram_reference_for(config, pairset.task.name)
    if reference == GENERAL_REFERENCE:
        m.ngram = NgramLM(config.ngram_order).fit(general_sentences())
    elif reference:
        from cfaug.data.io import read_dataset

        data = read_dataset(reference, pairset.task)
        role = pairset.task.edit_roles[0]
        m.ngram = NgramLM(config.ngram_order).fit(r.fields[role] for r in data.records)
    return m


def _score(group: list[CounterfactualPair], idx: list[int], items: _PerPair, pairset: PairSet,
           config: EvaluationConfig, m: _Models, timings: dict[str, float]) -> list[MetricResult]:
    orig = [p.original for p in group]
    new = [p.counterfactual for p in group]
    keys = list(zip(orig, new))
    results: list[MetricResult] = []
    flip = None
    if m.judge is not None and items.predicted is not None:
        flip = flip_rate_from_predictions([items.predicted[i] for i in idx], [p.target for p in group],
                                          {"independent": True, **m.judge_info})
        results.append(flip)
    if config.own_judge:
        results.append(own_judge_flip_rate(group))
    content = None
    if m.encoder is not None:
        content = embedding_cosine_result([items.cosine[k] for k in keys], m.encoder)
        results.append(content)
    if m.tokens is not None:
        content = bertscore_result([items.bert[k] for k in keys], m.tokens)
        results.append(content)
    if flip is not None and content is not None:
        results.append(h_score(content, flip))
    with _timed(timings, "edit_rate"):
        results.append(edit_rate(orig, new))
    if m.mover is not None:
        results.append(mover_result([items.mover[k] for k in keys], m.mover))
    if m.lm is not None:
        results.append(perplexity_result([items.nll[t] for t in new], m.lm))
    if m.ngram is not None:
        with _timed(timings, "ngram_perplexity"):
            ng = ngram_perplexity(new, m.ngram, originals=orig)
        ng.settings["reference_file"] = ngram_reference_for(config, pairset.task.name)
        results.append(ng)
    with _timed(timings, "self_bleu"):
        results.append(self_bleu(new, max_n=config.self_bleu_max_n))
    with _timed(timings, "distinct_n"):
        for n in config.distinct:
            results.append(distinct_n(new, n))
    if config.rouge_reference:
        if config.rouge_reference == "original":
            refs = orig
        else:  # every pair has the column: evaluate() checked them all before the slow stages
            refs = [str(p.columns[config.rouge_reference]) for p in group]
        with _timed(timings, "rouge"):
            r = rouge(new, refs)
        r.settings["reference"] = config.rouge_reference
        results.append(r)
    return results
