"""auto-CAD's edits of each text, per variant, from its scored causal terms: RM-CT removes terms (each
sentence's most important first) until C flips; REP-CT replaces them by proposals of the target polarity
(scored against the original sentence, or chosen by Eq. 1 on the sentence as edited so far), after the
explicit ratings and the phrases mined from ``pairs``; the synonym set goes on from REP-CT. The result is
a list of :data:`Rewrite` plans, which :mod:`~cfaug.methods.auto_cad.filters` applies and judges."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from cfaug.data.records import WorkItem
from cfaug.data.tasks import Task
from cfaug.editing.lexicon import NEGATED_ONLY, NEGATORS, Lexicon
from cfaug.editing.manner import own_flip
from cfaug.editing.negation import intent_negation, negate_predicate, negator_removal
from cfaug.editing.ngram import BigramModel
from cfaug.editing.scores import score_edits
from cfaug.editing.text import Edit, Token, agree_article, apply_edits, match_case, sentence_members
from cfaug.editing.word_roles import fits_idiom, graded_by_idiom
from cfaug.methods.auto_cad.causal_terms import CausalTerm
from cfaug.methods.auto_cad.config import AutoCADConfig
from cfaug.methods.auto_cad.progressive import ContextSampler, EditedText, replace_in_order, substitute_synonyms
from cfaug.proposers.replacements import ReplacementRequest

#: what ranks a replacement the causal LM did not read (or read below its floor) after those it did
UNREAD = 1e6
#: replacements kept per term: the next one stands in when another term of the sentence took the best
#: ("dull and stupid" -> "fun and brilliant", not "brilliant and brilliant"; see _distinct_choices)
SPARE_OPTIONS = 3

#: a planned rewrite: the item's index, its variant (rm-ct, rep-ct, syn), its edits, the causal terms they
#: edit, and notes for its meta
Rewrite = tuple[int, str, list[Edit], list[CausalTerm], dict[str, Any]]


class EditPlanner:
    """The edits of every variant for a batch of texts, from the method's parts: its ``config``, opinion
    ``lexicon``, replacement ``proposer``, ``bigram`` model of the training texts and ``phrases`` mined from
    ``pairs``. ``manner``: whether a tagger reads the manner adverbs; ``similarity(a, b)``: the embedding
    cosines of word pairs (for the synonym set); ``fluency_lm``: a causal LM scorer
    (:class:`~cfaug.judges.causal_lm.CausalLMScorer`) that re-ranks each term's best replacements."""

    def __init__(self, config: AutoCADConfig, lexicon: Lexicon, proposer: Any, bigram: BigramModel | None,
                 phrases: dict[str, Any], *, manner: bool,
                 similarity: Callable[[Sequence[str], Sequence[str]], Any], fluency_lm: Any = None) -> None:
        self.fluency_lm = fluency_lm
        self.config = config
        self.lexicon = lexicon
        self.proposer = proposer
        self.bigram = bigram
        self.phrases = phrases
        self.manner = manner
        self.similarity = similarity

    def plan(self, items: Sequence[WorkItem], docs: list[Any], tags: Sequence[dict[int, str]], seeds: Sequence[int],
             task: Task, clf: Any, variants: AbstractSet[str]) -> list[Rewrite]:
        """The rewrites of ``variants`` (rm, rep, syn): every item's RM-CT and REP-CT rewrites, item by item,
        then the synonym sets. ``docs``: each item's (tokens, scored causal terms, label column); ``tags``: its
        Penn Treebank tags by token start; ``seeds``: its seed."""
        pending: list[Rewrite] = []
        c = self.config
        # REP-CT's edits per item (several with alternatives > 1), each with notes for meta
        reps: list[list[tuple[list[Edit], list[CausalTerm], dict[str, Any]]]] = [[] for _ in items]
        if variants & {"rep", "syn"}:
            if c.rep_selection == "eq1":
                for i, (state, notes) in enumerate(zip(*self._replace_in_order(items, docs, tags, seeds, task, clf))):
                    if state.edits:
                        reps[i].append((state.edits, state.used, {"choices": notes}))
            else:
                for i, plans in enumerate(self._plan_replacements(items, docs, tags, task, clf)):
                    reps[i] = [(*self._until_flip(clf, items[i], plan), {}) for plan in plans]
        for i, (item, (tokens, terms, _)) in enumerate(zip(items, docs)):
            # RM-CT removes words and negators; a promise is only taken back, by REP-CT
            ranked = sorted((t for t in terms if t.importance > 0 and t.kind != "promise"), key=lambda t: -t.importance)
            if "rm" in variants and c.rm_terms == "top-per-sentence" and any(t.kind != "promise" for t in terms):
                # Algorithm 1, line 5: each sentence loses its most important term, whatever C says then
                firsts: dict[int, CausalTerm] = {}
                for t in sorted((t for t in terms if t.kind != "promise"), key=lambda t: -t.importance):
                    firsts.setdefault(tokens[t.head].sentence, t)
                order = sorted(firsts.values(), key=lambda t: t.head)
                pending.append((i, "rm-ct", [self._removal(tokens, t, item.record.text(), tags[i]) for t in order],
                                 order, {}))
            elif "rm" in variants and ranked:
                # hierarchical removal: the most important term of each sentence first, then the others,
                # until the classifier flips (or all of them with replace="all")
                firsts = {}
                for t in ranked:
                    firsts.setdefault(tokens[t.head].sentence, t)
                order = list(firsts.values()) + [t for t in ranked if t not in firsts.values()]
                edits, used = self._until_flip(clf, item, [(self._removal(tokens, t, item.record.text(), tags[i]), t)
                                                           for t in order])
                pending.append((i, "rm-ct", edits, used, {}))
            if "rep" in variants:
                pending += [(i, "rep-ct", edits, used, extra) for edits, used, extra in reps[i]]
        if "syn" in variants:
            pending += self._synonyms(items, docs, reps, clf)
        return pending

    def _replace_in_order(self, items: Sequence[WorkItem], docs: list[Any], tags: Sequence[dict[int, str]],
                          seeds: Sequence[int], task: Task,
                          clf: Any) -> tuple[list[EditedText], list[list[dict[str, Any]]]]:
        """REP-CT as Algorithm 1 lines 6-11 (``rep_selection="eq1"``): every causal term, in order of
        importance, edited on the text as edited so far (see :mod:`~cfaug.methods.auto_cad.progressive`)."""
        c = self.config
        labels = list(clf.labels)
        states = [EditedText(item.record.text(), tokens) for item, (tokens, _, _) in zip(items, docs)]
        order = [sorted(terms, key=lambda t: -t.importance) for _, terms, _ in docs]
        sampler = ContextSampler(c.contexts, c.context_samples, c.context_keep, c.context_window, self.bigram)
        notes = replace_in_order(
            states, order, [task.polarity(it.target) or "" for it in items],
            [labels.index(it.target) if it.target in labels else 0 for it in items], tags, self.proposer,
            clf.predict_proba, sampler, [np.random.default_rng(seed + 1) for seed in seeds],
            removal=lambda doc, t: self._removal(doc.tokens, t, doc.text),
            fit_article=lambda doc, head, edit: agree_article(doc.text, doc.tokens, head, edit))
        return states, notes

    def _synonyms(self, items: Sequence[WorkItem], docs: list[Any],
                  reps: list[list[tuple[list[Edit], list[CausalTerm], dict[str, Any]]]],
                  clf: Any) -> list[Rewrite]:
        """The synonym set: each item's first REP-CT rewrite, with the words still supporting the source
        label replaced by synonyms until C flips."""
        c = self.config
        labels = list(clf.labels)
        idx = [i for i in range(len(items)) if reps[i]]
        states = []
        for i in idx:
            state = EditedText(items[i].record.text(), docs[i][0])
            for e, t in zip(reps[i][0][0], reps[i][0][1]):
                state.apply(e, t)
            states.append(state)
        column = [labels.index(items[i].record.label) if items[i].record.label in labels else 0 for i in idx]
        target = [labels.index(items[i].target) if items[i].target in labels else 0 for i in idx]
        flipped = (lambda row, col: int(np.argmax(row)) == col and row[col] >= c.min_target_prob)
        added = substitute_synonyms(
            states, column, target, self.proposer, clf.predict_proba,
            self.similarity,
            lambda w: bool(self.lexicon.polarity(w)) or w in NEGATORS or w == "n't",
            c.max_synonyms, c.synonym_min_similarity, flipped)
        return [(i, "syn", state.edits, state.used, {"synonyms": len(new)})
                for i, state, new in zip(idx, states, added)]

    def _plan_replacements(self, items: Sequence[WorkItem], docs: list[Any], tags: Sequence[dict[int, str]],
                           task: Task, clf: Any) -> list[list[list[tuple[Edit, CausalTerm]]]]:
        """For every item, up to ``alternatives`` REP-CT plans: for every causal term the edit REP-CT would
        make (the a-th best option in plan a), ordered by importance, after mirrored ratings. ``tags``:
        each text's Penn Treebank tags by token start, which replacements must fit."""
        requests, where = [], []
        # every term's options (replacements by rank, and a negation), best first
        options: list[list[list[tuple[Edit, CausalTerm]]]] = [[] for _ in items]
        for i, (item, (tokens, terms, _)) in enumerate(zip(items, docs)):
            tgt_pol = task.polarity(item.target)
            for t in terms:
                if t.kind == "promise":  # "will definitely be back" -> "will never be back"
                    found = intent_negation(tokens, t.head, tags[i])
                    if found is not None:
                        options[i].append([(found[1], t)])
                    continue
                if t.kind != "word":
                    continue
                # "worth seeing" -> "not worth seeing"; "well written" -> "poorly written"
                fixed = own_flip(item.record.text(), tokens, t.head, tags[i], self.lexicon,
                                 task.polarity(item.record.label) or "", manner=self.manner)
                if fixed is not None:
                    options[i].append([(fixed, t)])
                    continue
                if tokens[t.head].lower in NEGATED_ONLY:
                    continue  # "your money's worth" is a noun: no negation fits, and no word replaces it
                requests.append(_request(tokens, t.head, tgt_pol, tags[i].get(tokens[t.head].start, "")))
                where.append((i, t))
        proposals = self.proposer.propose(requests) if requests else []
        # "bored to death" -> "thrilled to death", never "fun to death"
        proposals = [[c for c in cands if fits_idiom(c[0])] if graded_by_idiom(docs[i][0], t.head) else cands
                     for (i, t), cands in zip(where, proposals)]
        # classifier movement toward the target for every (term, candidate), in one batch
        texts: dict[str, int] = {}
        cand_texts = []
        sentence_index: dict[int, dict[int, list[int]]] = {}
        for (i, t), cands in zip(where, proposals):
            tokens = docs[i][0]
            if i not in sentence_index:
                sentence_index[i] = sentence_members(tokens)
            members = sentence_index[i][tokens[t.head].sentence]
            ctx = t.contexts[0][0] if t.contexts else tokens[t.head].text
            rows = []
            for cand, _ in cands:
                variant = " ".join(cand if j == t.head else tokens[j].text for j in members)
                rows.append(texts.setdefault(variant, len(texts)))
            base = texts.setdefault(ctx, len(texts))
            neg = (negate_predicate(tokens, t.head, tags[i])
                   if self.config.negation_weight > 0 else None)
            neg_row = None
            if neg is not None:
                neg_words = _with_edit(tokens, members, neg)
                neg_row = (neg, texts.setdefault(" ".join(neg_words), len(texts)), neg_words)
            cand_texts.append((base, rows, members, neg_row))
        probs = clf.predict_proba(list(texts)) if texts else np.zeros((0, 0))
        labels = list(clf.labels)
        c = self.config
        text_of = [item.record.text() for item in items]
        totals = []
        for (i, t), cands, (base, rows, _, _) in zip(where, proposals, cand_texts):
            tcol = labels.index(items[i].target) if items[i].target in labels else 0
            moves = np.array([probs[r, tcol] - probs[base, tcol] for r in rows])
            totals.append(np.array([s for _, s in cands]) + c.classifier_weight * moves if cands else np.zeros(0))
        if self.fluency_lm is not None:
            self._rerank_by_lm(where, proposals, totals, docs, [m for _, _, m, _ in cand_texts], text_of)
        for (i, t), cands, (base, rows, members, neg_row), total in zip(where, proposals, cand_texts, totals):
            tcol = labels.index(items[i].target) if items[i].target in labels else 0
            tokens = docs[i][0]
            tok = tokens[t.head]
            scored: list[tuple[float, Edit]] = []
            if cands:
                # the options of the alternatives, and a few more for a word another term already took
                for k in np.argsort(-total, kind="stable")[: max(c.alternatives, SPARE_OPTIONS)]:
                    edit = Edit(tok.start, tok.end, match_case(tok.text, cands[k][0]), tok.text, "replace")
                    scored.append((float(total[k]), agree_article(text_of[i], tokens, t.head, edit)))
            if neg_row is not None:
                neg, row, neg_words = neg_row
                # which reads better: the bigram fluency of the two sentences, next to the priors and the
                # classifier's movement
                fluency = 0.0
                if scored:
                    best_words = _with_edit(tokens, members, Edit(tok.start, tok.end, scored[0][1].new.split()[-1],
                                                                  tok.text, "replace"))
                    fluency = (self.bigram.sentence_logp([w.lower() for w in neg_words])
                               - self.bigram.sentence_logp([w.lower() for w in best_words]))
                scored.append((c.negation_weight + c.lm_weight * fluency
                               + c.classifier_weight * (probs[row, tcol] - probs[base, tcol]), neg))
            if scored:
                scored.sort(key=lambda se: -se[0])
                options[i].append([(e, t) for _, e in scored])
        plans: list[list[list[tuple[Edit, CausalTerm]]]] = []
        for i, (_, terms, _) in enumerate(docs):
            tokens = docs[i][0]
            item_plans = []
            # explicit scores ("8/10") and phrases mined from --pairs come first: the most direct
            # statements of the label
            first = [(e, CausalTerm(head=-1, phrase=(), kind="score", importance=1.0))
                     for e in score_edits(text_of[i], task.polarity(items[i].target))]
            phrases = self._phrase_edits(text_of[i], tokens, task.polarity(items[i].record.label))
            first += [(e, CausalTerm(head=-1, phrase=(), kind="phrase", importance=1.0)) for e, _ in phrases]
            taken = [(f.start, f.end) for f, _ in first] + [(e.start, end) for e, end in phrases]
            for a in range(c.alternatives):
                # alternative a takes each term's a-th option (its last when it has fewer)
                plan = _one_negator(_distinct_choices(options[i], a, tokens), tokens)
                plan += [(self._removal(tokens, t, text_of[i], tags[i]), t) for t in terms if t.kind == "negation"]
                plan = [(e, t) for e, t in plan
                        if not any(e.start < hi and lo < e.end or e.start == lo for lo, hi in taken)]
                plan.sort(key=lambda et: -et[1].importance)
                plan[:0] = first
                if plan and plan not in item_plans:
                    item_plans.append(plan)
            plans.append(item_plans)
        return plans

    def _rerank_by_lm(self, where: Sequence[tuple[int, CausalTerm]], proposals: Sequence[Sequence[tuple[str, float]]],
                      totals: list[np.ndarray], docs: list[Any], members: Sequence[Sequence[int]],
                      text_of: Sequence[str]) -> None:
        """Add ``fluency_lm_weight`` x the causal LM's span score to each term's ``fluency_lm_candidates`` best
        replacements (``totals``, changed in place): the sentence (token indices ``members`` of each term)
        with the replacement against the sentence as written, read from the replaced word to two words after it. The others drop below them, and so
        does a replacement under ``fluency_lm_floor`` (unless every one is)."""
        from cfaug.judges.causal_lm import SpanRequest

        c = self.config
        asks: list[tuple[int, int, SpanRequest]] = []  # (term, candidate, request)
        for n, ((i, t), cands, total, sent) in enumerate(zip(where, proposals, totals, members)):
            if not len(total):
                continue
            tokens = docs[i][0]
            tok = tokens[t.head]
            lo, hi = tokens[sent[0]].start, tokens[sent[-1]].end
            sentence = text_of[i][lo:hi]
            at = tok.start - lo
            for k in np.argsort(-total, kind="stable")[: c.fluency_lm_candidates]:
                new = match_case(tok.text, cands[k][0])
                asks.append((n, int(k), SpanRequest(sentence, sentence[:at] + new + sentence[at + len(tok.text):],
                                                    (at, at + len(tok.text)), (at, at + len(new)))))
        if not asks:
            return
        scores = self.fluency_lm.span_scores([r for _, _, r in asks], per="word")
        best: dict[int, list[tuple[int, float]]] = {}
        for (n, k, _), score in zip(asks, scores):
            best.setdefault(n, []).append((k, score))
        for n, ranked in best.items():
            every_below = all(s < c.fluency_lm_floor for _, s in ranked)
            lifted = totals[n] - UNREAD  # candidates the LM did not read come after those it read
            for k, s in ranked:
                dropped = s < c.fluency_lm_floor and not every_below
                lifted[k] = totals[n][k] + c.fluency_lm_weight * s - (UNREAD / 2 if dropped else 0.0)
            totals[n] = lifted

    def _until_flip(self, clf: Any, item: WorkItem, plan: list[tuple[Edit, CausalTerm]]) -> tuple[list[Edit], list[CausalTerm]]:
        """Apply edits in order: all with positive importance (``replace="all"``) or until the classifier
        flips, then the rest one by one until it does; with ``replace="weighed"`` those with positive importance
        and no other (when there is one)."""
        text = item.record.text()
        labels = list(clf.labels)
        tcol = labels.index(item.target) if item.target in labels else 0
        prefixes = [apply_edits(text, [e for e, _ in plan[: k + 1]]) for k in range(len(plan))]
        probs = clf.predict_proba(prefixes)[:, tcol]
        positive = sum(1 for _, t in plan if t.importance > 0)
        flip_at = next((k for k, p in enumerate(probs) if p > self.config.min_target_prob), None)
        if self.config.replace == "all":
            n = max(positive, (flip_at + 1) if flip_at is not None else len(plan))
        elif self.config.replace == "weighed" and positive:
            n = positive
        else:
            n = (flip_at + 1) if flip_at is not None else len(plan)
        n = max(1, min(n, len(plan)))
        return [e for e, _ in plan[:n]], [t for _, t in plan[:n]]

    def _phrase_edits(self, text: str, tokens: Sequence[Token], polarity: str | None) -> list[tuple[Edit, int]]:
        """Edits for phrases of ``text`` that the mined pairs rewrite (longest first, left to right, no
        overlaps), each with the end of its scope. A source needs a content word, or for two or three
        words a negator ("can't")."""
        from spacy.lang.en.stop_words import STOP_WORDS

        table = self.phrases.get(polarity or "", {})
        if not table:
            return []
        edits: list[tuple[Edit, int]] = []
        j = 0
        while j < len(tokens):
            for n in (3, 2, 1):
                span = tokens[j: j + n]
                if len(span) < n or not all(t.is_word and t.sentence == span[0].sentence for t in span):
                    continue
                key = tuple(t.lower for t in span)
                content = [w for w in key if w not in STOP_WORDS]
                if not content and not (n > 1 and any(w in NEGATORS or w == "n't" for w in key)):
                    continue  # function words alone ("so much", "and") are not rewritten out of context
                best = table.get(key, Counter()).most_common(1)
                if best and best[0][1] >= self.config.phrase_min_count:
                    new = " ".join(best[0][0]).replace(" n't", "n't")
                    old = text[span[0].start: span[-1].end]
                    edit = Edit(span[0].start, span[-1].end, match_case(span[0].text, new), old, "phrase")
                    # its scope: the two words after it belong to the rewritten phrase too ("highly
                    # recommend" -> "can't recommend" leaves "recommend" alone)
                    after = [t for t in tokens[j + n: j + n + 2] if t.sentence == span[0].sentence]
                    edits.append((edit, after[-1].end if after else edit.end))
                    j += n - 1
                    break
            j += 1
        return edits

    def _removal(self, tokens: Sequence[Token], term: CausalTerm, text: str = "",
                 tags: dict[int, str] | None = None) -> Edit:
        return removal(tokens, term, text, self.lexicon, idiomatic=self.config.negator_removal == "idiomatic",
                       tags=tags)


def removal(tokens: Sequence[Token], term: CausalTerm, text: str = "", lexicon: Lexicon | None = None, *,
            idiomatic: bool = True, tags: dict[int, str] | None = None) -> Edit:
    """RM-CT's edit of ``term``: a word goes (with ``text``, the text the tokens index, its article agrees
    with what follows), a negation phrase loses its negator (kept idiomatic with ``text`` and
    ``idiomatic``, and with ``tags``, Penn tags by token start, "no" leaves the article its noun needs; see
    :func:`~cfaug.editing.negation.negator_removal`)."""
    tok = tokens[term.head]
    if term.kind == "word":
        edit = Edit(tok.start, tok.end, "", tok.text, "remove")
        return agree_article(text, tokens, term.head, edit) if text else edit
    return negator_removal(tokens, term.head, text if idiomatic else "", lexicon, tags if idiomatic else None)


def _request(tokens: Sequence[Token], i: int, target_polarity: str, tag: str = "") -> ReplacementRequest:
    tok = tokens[i]
    left = tokens[i - 1].lower if i > 0 and tokens[i - 1].sentence == tok.sentence else "<s>"
    right = tokens[i + 1].lower if i + 1 < len(tokens) and tokens[i + 1].sentence == tok.sentence else "</s>"
    masked = " ".join("[MASK]" if j == i else t.text for j, t in enumerate(tokens) if t.sentence == tok.sentence)
    return ReplacementRequest(tok.lower, left, right, target_polarity, masked, tag)


def _distinct_choices(options: Sequence[Sequence[tuple[Edit, CausalTerm]]], a: int,
                      tokens: Sequence[Token]) -> list[tuple[Edit, CausalTerm]]:
    """Each term's ``a``-th option (its last when it has fewer), but never the word another term of the
    sentence already became from a different word ("courteous and friendly" -> "rude and unfriendly", not
    "rude and rude"): the next option is taken instead, while there is one."""
    chosen: list[tuple[Edit, CausalTerm]] = []
    used: dict[tuple[int, str], str] = {}
    for opts in options:
        k = min(a, len(opts) - 1)
        while True:
            e, t = opts[k]
            key = (tokens[t.head].sentence, e.new.lower())
            if e.kind != "replace" or used.get(key, e.old.lower()) == e.old.lower() or k + 1 >= len(opts):
                break
            k += 1
        if e.kind == "replace":
            used.setdefault(key, e.old.lower())
        chosen.append((e, t))
    return chosen


def _one_negator(chosen: Any, tokens: Sequence[Token]) -> list[tuple[Edit, CausalTerm]]:
    """The chosen edits, with one negator per predicate and no word inside a negated stretch also flipped
    on its own ("was not an awful waste", not "was not an excellent waste")."""
    chosen = list(chosen)
    spans = [(min(e.start, tokens[t.head].start), tokens[t.head].end) for e, t in chosen if e.kind == "negation-insert"]
    kept: list[tuple[Edit, CausalTerm]] = []
    points: set[int] = set()
    for e, t in chosen:
        if e.kind == "negation-insert":
            if e.start in points:
                continue
            points.add(e.start)
        elif any(a <= e.start and e.end <= b for a, b in spans):
            continue
        kept.append((e, t))
    return kept


def _with_edit(tokens: Sequence[Token], members: Sequence[int], edit: Edit) -> list[str]:
    """The words of a sentence (token indices ``members``) after ``edit``, which replaces one token or
    inserts after one."""
    out: list[str] = []
    for j in members:
        tok = tokens[j]
        if edit.start == tok.start and edit.end == tok.end:
            out += edit.new.split()
        else:
            out.append(tok.text)
            if edit.start == edit.end == tok.end:
                out += edit.new.split()
    return out
