"""One choice among an item's candidates: score every rewrite that passed its checks, write the best.

Methods make several candidates per item (auto-CAD: each term's next-best replacement or a negation; CoBA:
other permutations and deletions; the LLM methods: several samples). Writing them all gives a training set
of near-duplicates of mixed quality; the choice step keeps the best ``keep`` of them by one score, the same
for every method:

* ``target_prob``: the probability an independent judge (not the method's own) gives the target label; a
  text of more than :data:`LONG_WORDS` words (a review) is scored with the probability its method's checks
  recorded (the flip check's, else the own judge's): a sentence encoder reads only its first few hundred word
  pieces, and reading a review's candidates costs seconds;
* ``fluency``: how much less likely the rewrite's words are than the original's under a cheap n-gram model
  of the domain (nats per token, 0 = as likely, capped at ``-FLUENCY_FLOOR``); a causal language model, when
  one is given, reads only the candidates within ``tie_margin`` of the best, to break near ties;
* ``closeness``: 1 - the token edit rate.

``score = min(target_prob, target_cap) + fluency_weight * fluency + closeness_weight * closeness - order_weight
* place``, where ``place`` is the candidate's position among the item's passing candidates in the method's own
order of preference (auto-CAD's first alternative takes each word's best replacement): above ``target_cap``
every candidate reads as flipped, and fluency, closeness and the method's preference decide. Candidates that failed a
check (flip, completeness, edit rate) take no part; when none passed, all stay as they are (the run records
why none was written). The chosen rows carry ``meta["choice"]``: their score and its parts, their rank and
how many candidates there were, so ``cfaug review`` can sort by it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cfaug.data.records import Counterfactual
from cfaug.data.tasks import Task
from cfaug.nlp.tokens import token_edit_rate

__all__ = ["ChoiceStep", "FLUENCY_FLOOR", "build_choice", "general_fluency", "ngram_fluency"]

#: the lowest fluency a candidate scores (nats per token below its original)
FLUENCY_FLOOR = 3.0


@dataclass
class ChoiceStep:
    """Chooses the best ``keep`` candidates of each item (see the module docstring).

    ``judge``: a label judge (``labels``, ``predict_proba`` of texts) independent of the method's own, or
    None (its part is then the flip check's probability recorded in ``meta``, else the own judge's, else
    0.5); ``fluency``: a function giving the mean log probability per token of a text under an n-gram model
    (None: 0 for every candidate); ``lm``: the same from a causal language model, read only for near ties;
    ``task``: the task the labels are of."""

    task: Task
    judge: Any = None
    fluency: Callable[[str], float] | None = None
    lm: Callable[[Sequence[str]], Sequence[float]] | None = None
    keep: int = 1
    fluency_weight: float = 0.3
    closeness_weight: float = 0.5
    order_weight: float = 0.05
    target_cap: float = 0.9
    tie_margin: float = 0.05

    def describe(self) -> dict[str, Any]:
        return {"keep": self.keep, "judge": getattr(self.judge, "name", None),
                "fluency": "n-gram" if self.fluency is not None else None, "lm_ties": self.lm is not None,
                "weights": {"target_prob": 1.0, "fluency": self.fluency_weight, "closeness": self.closeness_weight,
                            "order": self.order_weight}, "target_cap": self.target_cap}

    def choose(self, results: Sequence[Sequence[Counterfactual]]) -> list[list[Counterfactual]]:
        """Each item's candidates (one list per item) reduced to its chosen ones, best first, then those a check
        rejected (failed: counted, and written only with ``--keep-failed``); passing candidates that were not
        chosen are dropped (``meta.choice.candidates`` counts them). An empty list stays empty. Lists that
        carry a reason (:class:`~cfaug.data.records.NoCounterfactual`) are returned as they are."""
        passing = [(n, cf) for n, cands in enumerate(results) for cf in cands
                   if isinstance(cf, Counterfactual) and cf.passed]
        scores = self.score([cf for _, cf in passing])
        by_item: dict[int, list[tuple[float, int, Counterfactual]]] = {}
        for k, ((n, cf), s) in enumerate(zip(passing, scores)):
            place = len(by_item.get(n, []))  # the method's own order of preference
            s["score"] = round(s["score"] - self.order_weight * place, 4)
            by_item.setdefault(n, []).append((s["score"], k, cf))
        out: list[list[Counterfactual]] = []
        for n, cands in enumerate(results):
            ranked = sorted(by_item.get(n, []), key=lambda t: (-t[0], t[1]))
            if not ranked:
                out.append(cands)  # type: ignore[arg-type]
                continue
            self._break_ties(ranked, scores)
            chosen = []
            for rank, (_, k, cf) in enumerate(ranked[: self.keep], 1):
                cf.meta["choice"] = {**scores[k], "rank": rank, "candidates": len(ranked)}
                chosen.append(cf)
            # the candidates a check rejected stay, failed (counted, and written with --keep-failed)
            out.append(chosen + [cf for cf in cands if isinstance(cf, Counterfactual) and not cf.passed])
        return out

    def score(self, cands: Sequence[Counterfactual]) -> list[dict[str, Any]]:
        """The score of each candidate and its parts (rounded for ``meta``)."""
        if not cands:
            return []
        texts = [_text(cf, self.task) for cf in cands]
        originals = [_original(cf, self.task) for cf in cands]
        probs = [_recorded_prob(cf) for cf in cands]
        judged = [n for n, t in enumerate(texts) if len(t.split()) <= LONG_WORDS]
        if self.judge is not None and judged:
            labels = [self._canonical(lab) for lab in self.judge.labels]
            rows = self.judge.predict_proba([texts[n] for n in judged])
            for n, row in zip(judged, rows):
                probs[n] = float(sum(p for lab, p in zip(labels, row) if lab == cands[n].target))
        judge_of = {n: getattr(self.judge, "name", None) for n in judged} if self.judge is not None else {}
        out = []
        memo: dict[str, float] = {}
        for cf, text, orig, p in zip(cands, texts, originals, probs):
            flu = 0.0
            if self.fluency is not None:
                for t in (text, orig):
                    if t not in memo:
                        memo[t] = self.fluency(t)
                flu = max(-FLUENCY_FLOOR, min(0.0, memo[text] - memo[orig]))
            close = 1.0 - min(1.0, token_edit_rate(orig, text))
            total = min(p, self.target_cap) + self.fluency_weight * flu + self.closeness_weight * close
            out.append({"score": round(total, 4), "target_prob": round(p, 4), "fluency": round(flu, 4),
                        "closeness": round(close, 4), "judge": judge_of.get(len(out), _recorded_judge(cf))})
        return out

    def _break_ties(self, ranked: list[tuple[float, int, Counterfactual]], scores: list[dict[str, Any]]) -> None:
        """With a causal LM: the candidates within ``tie_margin`` of the best are ordered again by score plus
        the LM's fluency (per token, against the original), in place."""
        if self.lm is None or len(ranked) < 2:
            return
        near = [r for r in ranked if ranked[0][0] - r[0] <= self.tie_margin]
        if len(near) < 2:
            return
        texts = [_text(cf, self.task) for _, _, cf in near]
        orig = _original(near[0][2], self.task)
        values = list(self.lm([orig, *texts]))
        base = values[0]
        rescored = []
        for (s, k, cf), v in zip(near, values[1:]):
            lm = max(-FLUENCY_FLOOR, min(0.0, v - base))
            scores[k]["lm_fluency"] = round(lm, 4)
            scores[k]["score"] = round(s + self.fluency_weight * lm, 4)
            rescored.append((s + self.fluency_weight * lm, k, cf))
        ranked[: len(near)] = rescored
        ranked.sort(key=lambda t: (-t[0], t[1]))  # a near tie the LM reads as less fluent may fall behind others

    def _canonical(self, label: str) -> str:
        try:
            return self.task.label_space.canonical(label)
        except ValueError:
            return label


#: texts of more words than this are not read by the choice step's judge (see :meth:`ChoiceStep.score`)
LONG_WORDS = 60


def _recorded_judge(cf: Counterfactual) -> str | None:
    for key in ("flip_check", "own_judge"):
        rec = cf.meta.get(key)
        if isinstance(rec, dict) and isinstance(rec.get("target_prob"), (int, float)):
            return str(rec.get("judge") or rec.get("name") or key)
    return None


def _recorded_prob(cf: Counterfactual) -> float:
    for key in ("flip_check", "own_judge"):
        rec = cf.meta.get(key)
        if isinstance(rec, dict) and isinstance(rec.get("target_prob"), (int, float)):
            return float(rec["target_prob"])
    return 0.5


def _role(cf: Counterfactual, task: Task) -> str:
    return next((r for r in task.edit_roles if r in cf.fields), task.roles[0])


def _text(cf: Counterfactual, task: Task) -> str:
    return cf.fields.get(_role(cf, task), "")


def _original(cf: Counterfactual, task: Task) -> str:
    return cf.source.fields.get(_role(cf, task), "")


def ngram_fluency(model: Any) -> Callable[[str], float]:
    """The mean log probability per token of a text under ``model``: an
    :class:`~cfaug.judges.ngram_lm.NgramLM` (``log_prob``) or a :class:`~cfaug.editing.ngram.BigramModel`
    (``sentence_logp`` of lower-cased tokens)."""
    if hasattr(model, "log_prob"):
        def per_token(text: str) -> float:
            lp, n = model.log_prob(text)
            return lp / max(n, 1)
    else:
        from cfaug.editing.text import sentence_members, tokenize

        def per_token(text: str) -> float:
            tokens = tokenize(text)
            total, count = 0.0, 0
            for members in sentence_members(tokens).values():
                words = [tokens[j].lower for j in members if tokens[j].is_word]
                if words:
                    total += model.sentence_logp(words)
                    count += len(words) + 1
            return total / count if count else -math.inf
    return per_token


_GENERAL: list[Callable[[str], float]] = []


def general_fluency() -> Callable[[str], float]:
    """:func:`ngram_fluency` of a trigram model of the shipped general sentiment sample (20,000 review
    sentences and phrases): the cheap fluency of methods that train no model of their input (fitted once
    per process, in about a second)."""
    if not _GENERAL:
        import csv
        from importlib import resources

        from cfaug.judges.builtin import general_background_path
        from cfaug.judges.ngram_lm import NgramLM

        with resources.as_file(general_background_path()) as path:
            with open(path, encoding="utf-8", newline="") as fh:
                texts = [r["text"] for r in csv.DictReader(fh, delimiter="\t")]
        _GENERAL.append(ngram_fluency(NgramLM(3).fit(texts)))
    return _GENERAL[0]


def build_choice(task: Task, fallback_judge: Any, completeness: bool, keep: int, device: str = "cpu",
                 fluency: Callable[[str], float] | None = None) -> tuple[Any, ChoiceStep]:
    """The completeness check (with ``completeness`` and a task with polarities on one text; else None) and the
    choice step a method runs its candidates through. Both read with the general sentence-embedding judge
    (:func:`~cfaug.judges.embedding_logreg.general_embedding_judge`, a judge of another kind than the methods'
    TF-IDF ones) where the task is binary sentiment on one text; elsewhere the completeness check reads with
    ``fallback_judge`` (the flip check's or the method's own; None: the lexicon alone) and the choice step with
    the probabilities the rows record. ``fluency``: the n-gram fluency of the method's domain (default: a
    trigram model of the general sentiment sample, for tasks with polarities)."""
    from cfaug.filters.completeness import CompletenessCheck
    from cfaug.filters.flip_check import binary_sentiment

    judge = None
    if binary_sentiment(task):
        from cfaug.judges.embedding_logreg import LazyGeneralJudge

        judge = LazyGeneralJudge(device)
    polar = any(task.polarity(lab) for lab in task.label_space.labels) and len(task.roles) == 1
    check = CompletenessCheck(task, judge if judge is not None else fallback_judge) if completeness and polar else None
    if fluency is None and polar:
        fluency = general_fluency()
    return check, ChoiceStep(task, judge, fluency, keep=keep)
