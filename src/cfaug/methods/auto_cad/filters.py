"""How auto-CAD judges its rewrites: each planned rewrite becomes a counterfactual carrying C's verdict, its
edits, causal terms and scores (:func:`judge_rewrites`), and goes through the filters the parameters ask
for (:func:`build_filters`: flip, token edit rate, edited-sentence similarity, MoverScore). The similarity
compares the edited sentences with their originals (:func:`edited_sentence_similarity`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cfaug.data.records import Counterfactual, WorkItem
from cfaug.editing.text import apply_edits, sentence_spans
from cfaug.filters.base import apply_filters, build_filter, record_filters
from cfaug.filters.choice import ChoiceStep
from cfaug.filters.builtin import MinSimilarity
from cfaug.judges.base import Candidate
from cfaug.judges.registry import JudgeContext
from cfaug.methods.auto_cad.config import NAME, AutoCADConfig
from cfaug.methods.auto_cad.planner import Rewrite
from cfaug.nlp.tokens import same_words, token_edit_rate


def build_filters(config: AutoCADConfig, similarity: Any, judges: JudgeContext) -> list[Any]:
    """The filters of the parameters, in order: flip (``require_flip``), token edit rate, edited-sentence
    similarity (judged by ``similarity``) and MoverScore (built in ``judges``)."""
    c = config
    out: list[Any] = []
    if c.require_flip:
        out.append(build_filter({"@filters": "flip", "min_target_prob": c.flip_min_prob,
                                 "max_words": c.flip_max_words}))
    if c.max_edit_rate is not None:
        out.append(build_filter({"@filters": "max-edit-rate", "max": c.max_edit_rate, "min_edits": c.min_edits,
                                 "max_short": c.max_edit_rate_short}))
    if c.min_similarity > 0:
        out.append(MinSimilarity(c.min_similarity, similarity))
    if c.min_moverscore > 0:
        out.append(build_filter({"@filters": "moverscore", "min": c.min_moverscore, "model": c.moverscore_model},
                                judges))
    return out


def choose_per_variant(choice: ChoiceStep, results: list[list[Counterfactual]]) -> list[list[Counterfactual]]:
    """Each item's chosen candidates, ``choice.keep`` per variant (rm-ct, rep-ct, syn), in variant order."""
    groups: list[list[Counterfactual]] = []
    where: list[int] = []
    for n, res in enumerate(results):
        by: dict[str, list[Counterfactual]] = {}
        for cf in res:
            by.setdefault(str(cf.meta.get("variant")), []).append(cf)
        for cands in by.values():
            groups.append(cands)
            where.append(n)
    out: list[list[Counterfactual]] = [[] for _ in results]
    for n, chosen in zip(where, choice.choose(groups)):
        out[n] += chosen
    return out


def judge_rewrites(clf: Any, items: Sequence[WorkItem], docs: list[Any], pending: list[Rewrite],
                   config: AutoCADConfig, filters: Sequence[Any], proposer: str) -> list[list[Counterfactual]]:
    """Every item's counterfactuals from the ``pending`` rewrites: the edited text (none when it holds the same
    words, or the same as an earlier variant's), C's (``clf``) probability of the target, the
    filters' verdicts and the meta that records them; ``proposer``: the name of the proposer."""
    results: list[list[Counterfactual]] = [[] for _ in items]
    if not pending:
        return results
    labels = list(clf.labels)
    new_texts = [apply_edits(items[i].record.text(), edits) for i, _, edits, _, _ in pending]
    probs = clf.predict_proba(new_texts)
    c = config
    cands = []
    made: set[tuple[int, str]] = set()
    for (i, variant, edits, terms, extra), new, p in zip(pending, new_texts, probs):
        item = items[i]
        orig = item.record.text()
        if same_words(new, orig) or not edits or (i, new) in made:
            continue  # the same words (up to case, spacing, punctuation), or the same text as an earlier variant
        made.add((i, new))
        tcol = labels.index(item.target) if item.target in labels else 0
        threshold = c.flip_min_prob if c.require_flip else c.min_target_prob
        flipped = bool(labels[int(np.argmax(p))] == item.target and p[tcol] >= threshold)
        rate = token_edit_rate(orig, new)
        tokens = docs[i][0]
        meta = {
            "variant": variant,
            "edits": [e.to_json() for e in sorted(edits, key=lambda e: e.start)],
            "causal_terms": [t.describe(tokens) for t in terms],
            "own_judge": {"name": clf.name, "target_prob": round(float(p[tcol]), 4),
                          "flipped": flipped, "threshold": threshold},
            "edit_rate": round(rate, 4),
            "confidence": round(float(p[tcol]), 4),  # graded: C's probability of the target
            "proposer": proposer,
            **extra,
        }
        cf = Counterfactual(item.record, {"text": new}, item.target, NAME, meta)
        cand = Candidate(dict(item.record.fields), {"text": new}, item.target,
                         scores={"target_prob": float(p[tcol]), "flipped": float(flipped), "edit_rate": rate})
        cands.append((i, cf, cand))
    verdicts = apply_filters([cand for _, _, cand in cands], filters)
    for (i, cf, cand), v in zip(cands, verdicts):
        if "similarity" in cand.scores:
            cf.meta["similarity"] = round(float(cand.scores["similarity"]), 4)
        record_filters(cf.meta, v)
        results[i].append(cf)
    return results


class EditedSentenceJudge:
    """auto-CAD's similarity: :func:`edited_sentence_similarity` with the encoder of ``method`` (anything with
    an ``encoder`` attribute, read at each call: the method loads its encoder on first use)."""

    name = "edited-sentence-similarity"

    def __init__(self, method: Any) -> None:
        self.method = method

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        return np.asarray(edited_sentence_similarity(self.method.encoder, [c.old_text for c in batch],
                                                     [c.new_text for c in batch]), dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, **self.method.encoder.describe()}


def edited_sentence_similarity(encoder: Any, originals: Sequence[str], rewrites: Sequence[str]) -> list[float]:
    """Similarity of each rewrite to its original, sentence by sentence.

    Sentences are aligned by position; unchanged ones count 1.0, changed ones the encoder's cosine, and the
    result is the average weighted by the original sentences' lengths in characters. This sees every edit
    of a long review (a whole-text embedding is truncated at the encoder's window) and encodes only the
    changed sentences. Texts whose sentence count changed fall back to the whole-text cosine.
    """
    jobs: list[tuple[int, str, str, int]] = []
    whole: list[int] = []
    weights: list[tuple[float, float]] = []
    for i, (a, b) in enumerate(zip(originals, rewrites)):
        sa = [a[x:y] for x, y in sentence_spans(a)]
        sb = [b[x:y] for x, y in sentence_spans(b)]
        if len(sa) != len(sb):
            whole.append(i)
            weights.append((0.0, 1.0))
            continue
        same = sum(len(x) for x, y in zip(sa, sb) if x == y)
        weights.append((float(same), float(sum(len(x) for x in sa)) or 1.0))
        jobs += [(i, x, y, len(x)) for x, y in zip(sa, sb) if x != y]
    sims = encoder.cosine([j[1] for j in jobs], [j[2] for j in jobs]) if jobs else []
    acc = [w[0] for w in weights]
    for (i, _, _, n), sim in zip(jobs, sims):
        acc[i] += n * float(sim)
    out = [a / w[1] for a, w in zip(acc, weights)]
    if whole:
        for i, sim in zip(whole, encoder.cosine([originals[i] for i in whole], [rewrites[i] for i in whole])):
            out[i] = float(sim)
    return out
