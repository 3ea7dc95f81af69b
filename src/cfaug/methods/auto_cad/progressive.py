"""Edits made one after another on the text as edited so far (the seed paper's Algorithm 1 and its synonym
step; auto-CAD's ``paper`` preset).

* :func:`replace_in_order` (REP-CT with ``rep_selection="eq1"``, Algorithm 1 lines 6-11): the causal
  terms of a document are edited in order of importance. A word is masked in its sentence *as edited so
  far*, the proposer's words of the target polarity are its candidates (W_c), and the candidate with the
  largest Eq. 1 importance for the target label, in that sentence, replaces it. A negation phrase loses
  its negator.
* :func:`substitute_synonyms` (section 3.2, the data's third part): when the classifier still prefers
  the source label after REP-CT, the remaining words that support the source label most (Eq. 1 over the
  edited sentence) are replaced, one after another, by a word of no polarity that the masked LM proposes
  for the slot and whose embedding is close to the word's, the one that moves the classifier furthest
  toward the target, until the classifier flips.

Each round handles the next term of every document of the batch, so every proposer and classifier call
is batched across documents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cfaug.importance import Unit, build_importance
from cfaug.methods.auto_cad.causal_terms import CausalTerm, dropped_contexts, resampled_contexts
from cfaug.proposers.replacements import NEUTRAL, ReplacementRequest
from cfaug.editing.text import Edit, Token, apply_edits, match_case, sentence_members


@dataclass
class EditedText:
    """A document's tokens, the current word in each token's place ("" once removed) and the edits so
    far."""

    text: str
    tokens: Sequence[Token]
    words: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    used: list[CausalTerm] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.words:
            self.words = [t.text for t in self.tokens]
        self._members = sentence_members(self.tokens)

    def apply(self, edit: Edit, term: CausalTerm) -> None:
        covered = [j for j, t in enumerate(self.tokens) if edit.start <= t.start and t.end <= edit.end]
        for k, j in enumerate(covered):
            self.words[j] = edit.new if k == 0 else ""
        self.edits.append(edit)
        self.used.append(term)

    def sentence(self, head: int) -> list[int]:
        """Token indices of the sentence of token ``head``."""
        return self._members[self.tokens[head].sentence]

    def with_word(self, head: int, word: str) -> tuple[list[str], int]:
        """The words of ``head``'s sentence with ``word`` in its place, and its position there."""
        members = self.sentence(head)
        return [word if j == head else self.words[j] for j in members], members.index(head)

    def request(self, head: int, polarity: str, tag: str = "") -> ReplacementRequest:
        members = self.sentence(head)
        pos = members.index(head)
        before = [self.words[j] for j in members[:pos] if self.words[j]]
        after = [self.words[j] for j in members[pos + 1:] if self.words[j]]
        masked = " ".join([*before, "[MASK]", *after])
        return ReplacementRequest(self.tokens[head].lower, before[-1].lower() if before else "<s>",
                                  after[0].lower() if after else "</s>", polarity, masked, tag)

    def current(self, extra: Sequence[Edit] = ()) -> str:
        return apply_edits(self.text, [*self.edits, *extra])


@dataclass
class ContextSampler:
    """Eq. 1's sampled contexts for a span of a sentence: ``"drop"`` (random sub-sequences keeping each
    word with probability ``keep``) or ``"lm"`` (the ``window`` words on each side redrawn from ``lm``)."""

    kind: str
    samples: int
    keep: float = 0.8
    window: int = 10
    lm: Any = None

    def __call__(self, words: Sequence[str], phrase: Sequence[int], rng: np.random.Generator) -> list[tuple[str, str]]:
        if self.kind == "lm":
            return resampled_contexts(words, phrase, self.samples, self.window, self.lm, rng)
        return dropped_contexts(words, phrase, self.samples, self.keep, rng)


def replace_in_order(docs: Sequence[EditedText], terms: Sequence[Sequence[CausalTerm]], polarities: Sequence[str],
                     columns: Sequence[int], tags: Sequence[dict[int, str]], proposer: Any, predict: Callable,
                     sampler: ContextSampler, rngs: Sequence[np.random.Generator],
                     removal: Callable[[EditedText, CausalTerm], Edit],
                     fit_article: Callable[[EditedText, int, Edit], Edit]) -> list[list[dict[str, Any]]]:
    """REP-CT, Algorithm 1 lines 6-11, for every document of ``docs`` (edited in place).

    ``terms``: each document's causal terms in the order to edit them (by importance); ``polarities``: the
    target polarity; ``columns``: the classifier column of the target label; ``tags``: Penn Treebank tags
    by token start (may be empty); ``predict``: the classifier's probability matrix for texts;
    ``removal(doc, term)``: the edit removing a negation phrase's negator; ``fit_article(doc, head, edit)``:
    the edit with its indefinite article agreeing. Returns, per document, what each word's choice was
    (``meta["choices"]``)."""
    scorer = build_importance("occlusion")
    notes: list[list[dict[str, Any]]] = [[] for _ in docs]
    for r in range(max((len(t) for t in terms), default=0)):
        jobs = []
        for i, doc in enumerate(docs):
            if r >= len(terms[i]):
                continue
            term = terms[i][r]
            if term.kind == "word":
                jobs.append((i, term))
            else:
                doc.apply(removal(doc, term), term)
        if not jobs:
            continue
        requests = [docs[i].request(t.head, polarities[i], tags[i].get(docs[i].tokens[t.head].start, ""))
                    for i, t in jobs]
        proposals = proposer.propose(requests)
        units, owners = [], []
        for k, ((i, t), cands) in enumerate(zip(jobs, proposals)):
            for word, _ in cands:
                words, pos = docs[i].with_word(t.head, word)
                units.append(Unit(sampler(words, [pos], rngs[i]), columns[i]))
                owners.append((k, word))
        scores = scorer.score(units, predict) if units else []
        best: dict[int, tuple[float, str]] = {}
        for (k, word), value in zip(owners, scores):
            if k not in best or value > best[k][0]:
                best[k] = (value, word)
        for k, (i, t) in enumerate(jobs):
            if k not in best:
                notes[i].append({"term": docs[i].tokens[t.head].text, "candidates": 0})
                continue
            value, word = best[k]
            tok = docs[i].tokens[t.head]
            edit = fit_article(docs[i], t.head, Edit(tok.start, tok.end, match_case(tok.text, word), tok.text, "replace"))
            docs[i].apply(edit, t)
            notes[i].append({"term": tok.text, "new": word, "candidates": len(proposals[k]),
                             "eq1": round(float(value), 4)})
    return notes


def substitute_synonyms(docs: Sequence[EditedText], sources: Sequence[int], targets: Sequence[int],
                        proposer: Any, predict: Callable, similarity: Callable[[Sequence[str], Sequence[str]], Any],
                        skip: Callable[[str], bool], max_words: int, min_similarity: float,
                        flipped: Callable[[np.ndarray, int], bool]) -> list[list[Edit]]:
    """The synonym step for documents the classifier does not yet put on the target label.

    ``sources``/``targets``: classifier columns of the source and target labels; ``similarity(words,
    candidates)``: embedding cosine of each pair; ``skip(word)``: words never substituted (opinion words,
    negators); ``flipped(probs_row, target)``: whether a probability row counts as the target. Returns
    the synonym edits of each document (also applied to it)."""
    out: list[list[Edit]] = [[] for _ in docs]
    probs = predict([d.current() for d in docs])
    active = [i for i, d in enumerate(docs) if not flipped(probs[i], targets[i])]
    if not active or max_words <= 0:
        return out
    # words supporting the source label most: Eq. 1 over the whole edited sentence (one context)
    edited = [{j for j, t in enumerate(d.tokens) if any(e.start <= t.start and t.end <= e.end for e in d.edits)}
              for d in docs]
    units, owners = [], []
    for i in active:
        doc = docs[i]
        for j, tok in enumerate(doc.tokens):
            if j in edited[i] or not tok.is_word or not doc.words[j] or skip(tok.lower):
                continue
            words, pos = doc.with_word(j, doc.words[j])
            with_w = " ".join(w for w in words if w)
            without = " ".join(w for k, w in enumerate(words) if w and k != pos)
            units.append(Unit([(with_w, without)], sources[i]))
            owners.append((i, j))
    scores = build_importance("occlusion").score(units, predict) if units else []
    queue: dict[int, list[int]] = {i: [] for i in active}
    for (i, j), value in sorted(zip(owners, scores), key=lambda o: -o[1]):
        if value > 0 and len(queue[i]) < max_words:
            queue[i].append(j)
    for r in range(max_words):
        jobs = [(i, queue[i][r]) for i in active if r < len(queue[i])]
        if not jobs:
            break
        proposals = proposer.propose([docs[i].request(j, NEUTRAL) for i, j in jobs])
        pairs = [(k, w) for k, cands in enumerate(proposals) for w, _ in cands]
        sims = similarity([docs[jobs[k][0]].tokens[jobs[k][1]].lower for k, _ in pairs],
                          [w for _, w in pairs]) if pairs else []
        options: dict[int, list[Edit]] = {}
        for (k, word), sim in zip(pairs, sims):
            if sim >= min_similarity:
                tok = docs[jobs[k][0]].tokens[jobs[k][1]]
                options.setdefault(k, []).append(Edit(tok.start, tok.end, match_case(tok.text, word), tok.text,
                                                      "synonym"))
        texts = [(k, e, docs[jobs[k][0]].current([e])) for k, es in options.items() for e in es]
        p = predict([t for _, _, t in texts]) if texts else np.zeros((0, 0))
        choice: dict[int, tuple[float, Edit, int]] = {}
        for row, (k, e, _) in enumerate(texts):
            value = float(p[row, targets[jobs[k][0]]])
            if k not in choice or value > choice[k][0]:
                choice[k] = (value, e, row)
        done = set()
        for k, (value, e, row) in choice.items():
            i, j = jobs[k]
            docs[i].apply(e, CausalTerm(head=j, phrase=(j,), kind="synonym", importance=0.0))
            out[i].append(e)
            if flipped(p[row], targets[i]):
                done.add(i)
        active = [i for i in active if i not in done]
    return out
