"""Generation of ``t2s``: every input record is a slot that draws ``candidates`` (label, template) pairs
(:func:`draw_jobs`), the generator writes a sentence for each, both discriminators score it
(:func:`candidate`), and the ``keep`` best of a record that pass its filters are kept (:func:`mark_best`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cfaug.data.aste import align_terms, example_from_record, format_triplets, parse_label_sequence
from cfaug.data.records import Counterfactual, NoCounterfactual, WorkItem
from cfaug.filters.base import record_filters
from cfaug.methods.t2s.config import T2SConfig

#: (index of the input item, label entry, template entry)
Job = tuple[int, dict[str, Any], dict[str, Any]]


def pairing_for(pool: list[dict[str, Any]], label_source: str, template_source: str) -> Any:
    """The :class:`~cfaug.methods.t2s.tuning.Pairing` that draws labels and templates from where the
    parameters say (``pool`` or its ``train`` entries; ``record`` labels are drawn from the pool's)."""
    from cfaug.methods.t2s.tuning import Pairing

    train = [e for e in pool if e["source"] == "train"]
    labels = train if label_source == "train" else pool
    return Pairing(labels, train if template_source == "train" else pool)


def draw_jobs(items: Sequence[WorkItem], c: T2SConfig, pairing: Any,
              seed_of: Callable[[WorkItem], int]) -> tuple[list[list[Counterfactual]], list[Job]]:
    """Each item's ``candidates`` (label, template) pairs, drawn with the item's seed; the results list holds a
    :class:`NoCounterfactual` for an item that has none."""
    from cfaug.methods.t2s.pool import entry

    results: list[list[Counterfactual]] = [[] for _ in items]
    jobs: list[Job] = []
    for n, item in enumerate(items):
        rng = np.random.default_rng(seed_of(item))
        fixed = None
        if c.label_source == "record":
            ex = example_from_record(item.record)
            if not ex.triplets:
                results[n] = NoCounterfactual("the record has no triplet to write a sentence for")
                continue
            # the id a training record has in the pool, so that it is never paired with its own template
            fixed = entry(f"t{item.record.id}", ex.tokens, ex.triplets, "record")
        before = len(jobs)
        for _ in range(c.candidates):
            drawn = pairing.draw(rng, fixed)
            if drawn is not None:
                jobs.append((n, *drawn))
        if len(jobs) == before:
            results[n] = NoCounterfactual("no template with the same number of triplets")
    return results, jobs


def candidate(item: WorkItem, lab: dict[str, Any], tpl: dict[str, Any], sent: str, f: float, a: float,
              c: T2SConfig, method: str) -> Counterfactual:
    """The counterfactual for one generated sentence, its spans found from the label's terms, its scores and
    filter verdicts in ``meta``."""
    from cfaug.methods.t2s.tuning import length_penalty

    tokens = sent.split()
    triplets = align_terms(tokens, parse_label_sequence(lab["label_seq"])) if tokens else None
    # without its terms the sentence has no spans for the label: it carries none (and fails "terms")
    target = format_triplets(triplets) if triplets else "[]"
    cf = Counterfactual(item.record, {**item.record.fields, "text": sent}, target, method)
    cf.meta.update({"label_sequence": lab["label_seq"], "label_parent": lab["id"],
                    "label_parent_source": lab["source"], "template": tpl["template"],
                    "template_parent": tpl["id"], "template_parent_source": tpl["source"],
                    "alignment": round(float(a), 4), "fluency": round(float(f), 4),
                    "length_penalty": round(length_penalty(sent, tpl["template"]), 4),
                    "confidence": round(float(a + f) / 2, 4)})
    verdicts = {"terms": triplets is not None, "alignment": bool(a >= c.min_alignment),
                "fluency": bool(f >= c.min_fluency)}
    notes = {}
    if triplets is None:
        notes["terms"] = "a term of the label does not occur in the sentence"
    if a < c.min_alignment:
        notes["alignment"] = f"alignment {a:.2f} below {c.min_alignment}"
    if f < c.min_fluency:
        notes["fluency"] = f"fluency {f:.2f} below {c.min_fluency}"
    record_filters(cf.meta, verdicts, notes)
    return cf


def mark_best(scored: list[tuple[float, Counterfactual]], keep: int) -> list[Counterfactual]:
    """One record's candidates, best score first; a passing one beyond the ``keep`` best or repeating a better
    one's sentence fails the ``top`` filter."""
    out: list[Counterfactual] = []
    seen: set[str] = set()
    kept = 0
    for _score, cf in sorted(scored, key=lambda x: -x[0]):
        if cf.passed and (cf.fields["text"] in seen or kept >= keep):
            reason = "a duplicate of a better sentence" if cf.fields["text"] in seen else \
                f"not among the {keep} best of its record"
            record_filters(cf.meta, {**cf.meta["filters"], "top": False},
                           {**cf.meta.get("filter_notes", {}), "top": reason})
        elif cf.passed:
            kept += 1
        seen.add(cf.fields["text"])
        out.append(cf)
    return out


def generate(items: Sequence[WorkItem], c: T2SConfig, generator: Any, fluency: Any, alignment: Any, pairing: Any,
             seed_of: Callable[[WorkItem], int], method: str) -> list[list[Counterfactual]]:
    """The candidates of every item (the module docstring)."""
    from cfaug.methods.t2s.generator import condition_text

    results, jobs = draw_jobs(items, c, pairing, seed_of)
    if not jobs:
        return results
    conds = [condition_text(lab["label_seq"], tpl["template"]) for _, lab, tpl in jobs]
    sentences = generator.generate(conds, beams=4 if c.decoding == "beam" else 1, sample=c.decoding == "sample",
                                   max_new_tokens=c.max_new_tokens, no_repeat_ngram=c.no_repeat_ngram)
    flu = fluency.fluency(sentences)
    ali = alignment.alignment([lab["label_seq"].lower() for _, lab, _ in jobs], sentences)
    per_item: dict[int, list[tuple[float, Counterfactual]]] = {}
    for (n, lab, tpl), sent, f, a in zip(jobs, sentences, flu, ali):
        per_item.setdefault(n, []).append((float(a + f), candidate(items[n], lab, tpl, sent, f, a, c, method)))
    for n, scored in per_item.items():
        results[n].extend(mark_best(scored, c.keep))
    return results
