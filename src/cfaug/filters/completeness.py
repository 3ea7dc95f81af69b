"""The completeness check: no opinion of the source's polarity is left standing in a rewrite.

A word-level rewrite often flips the first opinion of a sentence and leaves the next one: "always rude in
their tone and always have shitty customer service !" -> "always friendly in their tone and always have
shitty customer service !". A classifier reading the whole text may still give the target (the new word
weighs more), yet the row says both things and teaches a model nothing clean. The check reads the rewrite
clause by clause:

1. **Where.** A short text (at most ``short_words`` words) is read whole. In a longer one (a review), the
   clauses the rewrite changed, and only their opinion words (step 2) with the judge's reading of at least
   ``long_min_clause_prob``: a review keeps its other sentences, plot words ("a bad guy", "the monster")
   abound, and the whole-text judge decides whether the review reads as the target. (Read whole, like a
   short text, 90% of the human CAD-IMDB dev counterfactuals would count as incomplete; read this way 32%:
   ``python bench/precision.py``.)
2. **Lexicon.** In each clause (split at commas, semicolons, dashes and the words that join clauses: and,
   but, yet, although, ...), an opinion word of the opinion lexicon reads with its own polarity, or the
   other one when a negator stands up to :data:`NEGATION_WINDOW` words before it in the clause ("not
   good", "never friendly", "least favorite"). A word that reads as the source's polarity is a suspect.
3. **Judge.** A suspect counts only when the label judge reads its clause as the source label with at
   least ``min_clause_prob``: a word the lexicon lists may say nothing about the label where it stands, and
   the judge of its clause decides. In a short text, a clause the judge reads as the source label with at
   least ``clause_prob`` counts whatever its words: the lexicon does not know every opinion ("shitty",
   "will definitely make it a regular spot"). Without a judge every suspect word counts.

The verdict goes into the rewrite's ``meta["filters"]["complete"]`` (with the words left in
``meta["completeness"]`` and a note in words), so every method records it the same way. Tasks without a
polarity (NLI, style) pass unread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cfaug.data.records import Counterfactual
from cfaug.data.tasks import Task
from cfaug.editing.lexicon import NEGATORS as EDIT_NEGATORS
from cfaug.editing.lexicon import Lexicon, load_lexicon
from cfaug.editing.text import Token, sentence_spans, tokenize
from cfaug.filters.base import record_filters
from cfaug.nlp.tokens import word_sequence

__all__ = ["CompletenessCheck", "Leftover", "NAME", "clauses"]

#: the verdict's name in ``meta["filters"]``
NAME = "complete"
#: words that turn the polarity of an opinion word after them in the same clause
#: (the negators the editors remove, and more that turn a reading)
NEGATORS = frozenset(EDIT_NEGATORS) | frozenset({
    "barely", "scarcely", "nothing", "none", "nobody", "least", "less", "lack", "lacks", "lacked", "lacking",
    "instead", "rather", "zero", "nowhere", "dont", "didnt", "wasnt", "isnt", "cant", "wont", "couldnt", "wouldnt",
    "shouldnt", "doesnt", "arent", "werent"})
#: how many words before an opinion word a negator may stand and still turn it
NEGATION_WINDOW = 3
#: words and marks that end a clause
CLAUSE_BREAKS = frozenset({",", ";", ":", "-", "(", ")", "!", "?", ".", "and", "but", "yet", "although", "though",
                           "while", "whereas", "however", "because", "since", "so", "or", "plus", "except",
                           "unlike", "whilst"})
_OPPOSITE = {"positive": "negative", "negative": "positive"}


@dataclass(frozen=True)
class Leftover:
    """An opinion of the source's polarity left in a rewrite: the ``word`` at ``start:end`` of the rewritten
    text, whether a negator turned it (``negated``: "not bad" left in a rewrite meant to be negative), its
    ``clause`` and the judge's probability of the source label for that clause (None without a judge)."""

    word: str
    start: int
    end: int
    negated: bool
    clause: str
    clause_prob: float | None = None

    def describe(self) -> str:
        if self.word == self.clause:
            return f"\"{self.clause}\"" + (f" (judge: {self.clause_prob:.2f})" if self.clause_prob is not None else "")
        word = f"'not \u2026 {self.word}'" if self.negated else f"'{self.word}'"
        where = f" in \"{self.clause}\"" if self.clause else ""
        prob = f" (judge: {self.clause_prob:.2f})" if self.clause_prob is not None else ""
        return f"{word}{where}{prob}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"word": self.word, "start": self.start, "end": self.end, "clause": self.clause}
        if self.negated:
            out["negated"] = True
        if self.clause_prob is not None:
            out["clause_prob"] = round(self.clause_prob, 4)
        return out


def clauses(text: str, tokens: Sequence[Token] | None = None) -> list[list[Token]]:
    """The clauses of ``text`` as runs of word tokens, split at sentence ends and :data:`CLAUSE_BREAKS`."""
    tokens = tokenize(text) if tokens is None else tokens
    out: list[list[Token]] = []
    cur: list[Token] = []
    sentence = None
    for tok in tokens:
        if tok.sentence != sentence or tok.lower in CLAUSE_BREAKS:
            if cur:
                out.append(cur)
            cur = []
            sentence = tok.sentence
            if tok.lower in CLAUSE_BREAKS:
                continue
        if tok.is_word or tok.text in ("'", "$", "%"):
            cur.append(tok)
    if cur:
        out.append(cur)
    return out


class CompletenessCheck:
    """Reads rewrites for opinions of the source's polarity left standing (see the module docstring).

    ``task``: the task (its polarity of each label); ``judge``: a label judge (``labels``, ``predict_proba``
    of texts) that reads each clause holding a suspect word, or None (the lexicon alone decides);
    ``min_clause_prob``: the judge's probability of the source label from which a suspect word counts;
    ``clause_prob``: ... from which a clause counts whatever its words (an opinion the lexicon does not know:
    "always have shitty customer service !", "will definitely make it a regular spot !");
    ``long_min_clause_prob``: the same for the opinion words of a longer text, which has no clause rule;
    ``short_words``: texts up to this many words are read whole, longer ones in the clauses that changed.
    """

    name = NAME

    def __init__(self, task: Task, judge: Any = None, *, lexicon: Lexicon | None = None,
                 min_clause_prob: float = 0.5, clause_prob: float = 0.9, long_min_clause_prob: float = 0.9,
                 short_words: int = 60) -> None:
        self.task = task
        self.judge = judge
        self.lexicon = lexicon or load_lexicon()
        self.min_clause_prob = min_clause_prob
        self.clause_prob = clause_prob
        self.long_min_clause_prob = long_min_clause_prob
        self.short_words = short_words
        self._columns: dict[str, int] = {}
        if judge is not None:
            for n, lab in enumerate(judge.labels):
                try:
                    self._columns.setdefault(task.label_space.canonical(lab), n)
                except ValueError:
                    continue

    def describe(self) -> dict[str, Any]:
        return {"check": NAME, "judge": getattr(self.judge, "name", None), "min_clause_prob": self.min_clause_prob,
                "clause_prob": self.clause_prob, "long_min_clause_prob": self.long_min_clause_prob,
                "short_words": self.short_words, "lexicon": "opinion lexicon (Hu & Liu 2004)"}

    # ----------------------------------------------------------------------------------- reading
    def long(self, tokens: Sequence[Token]) -> bool:
        """Whether a text of these ``tokens`` is read as a long one (more than ``short_words`` words)."""
        return sum(1 for t in tokens if t.is_word) > self.short_words

    def suspects(self, original: str, rewrite: str, source_polarity: str,
                 tokens: Sequence[Token] | None = None) -> list[tuple[Leftover, list[Leftover]]]:
        """The clauses of ``rewrite`` the check reads (see the module docstring), each as a :class:`Leftover`
        spanning it, with its opinion words that read as ``source_polarity``; the judge has read nothing yet.
        A clause whose opinion words all read as the target is left out: the lexicon reads negation ("it
        was n't terrible") where an embedding judge often does not. ``tokens``: the rewrite's, when the caller
        has them."""
        tokens = tokenize(rewrite) if tokens is None else tokens
        long = self.long(tokens)
        region = changed_sentences(original, rewrite) if long else None
        before = {word_sequence(original[c[0].start: c[-1].end]) for c in clauses(original)} if long else set()
        out: list[tuple[Leftover, list[Leftover]]] = []
        for clause in clauses(rewrite, tokens):
            if region is not None and clause[0].sentence not in region:
                continue
            text = rewrite[clause[0].start: clause[-1].end]
            if long and word_sequence(text) in before:
                continue  # a clause of a long text the rewrite did not touch
            found, target_words = [], 0
            for k, tok in enumerate(clause):
                pol = self.lexicon.polarity(tok.lower)
                if pol is None:
                    continue
                negated = any(t.lower in NEGATORS or t.lower.endswith("n't")
                              for t in clause[max(0, k - NEGATION_WINDOW): k])
                reads = _OPPOSITE[pol] if negated else pol
                if reads == source_polarity:
                    found.append(Leftover(tok.text, tok.start, tok.end, negated, text))
                else:
                    target_words += 1
            if found or (not target_words and not long):  # a clause whose opinion words all read as the target
                out.append((Leftover(text, clause[0].start, clause[-1].end, False, text), found))  # is trusted
        return out

    def leftovers(self, pairs: Sequence[tuple[str, str, str]]) -> list[list[Leftover]]:
        """For each ``(original, rewrite, source label)``, the opinions of the source's polarity left in the
        rewrite: each opinion word that reads as the source's polarity in a clause the judge gives the source
        label with at least ``min_clause_prob``, and each clause the judge gives it with at least
        ``clause_prob`` whatever its words (all lexicon words without a judge). Every clause is read in one
        batch."""
        found, longs = [], []
        for original, rewrite, source in pairs:
            pol = self.task.polarity(source)
            tokens = tokenize(rewrite)
            longs.append(self.long(tokens))
            found.append(self.suspects(original, rewrite, pol, tokens) if pol in _OPPOSITE else [])
        if self.judge is None:
            return [[w for _, words in sus for w in words] for sus in found]
        asks: dict[tuple[str, str], int] = {}
        for sus, (_, _, source) in zip(found, pairs):
            for clause, _ in sus:
                asks.setdefault((clause.clause, source), len(asks))
        prob_of: dict[tuple[str, str], float] = {}
        if asks:
            keys = list(asks)
            for (clause, source), row in zip(keys, self.judge.predict_proba([c for c, _ in keys])):
                col = self._columns.get(source)
                prob_of[(clause, source)] = float(row[col]) if col is not None else 0.0
        out = []
        for sus, long, (_, _, source) in zip(found, longs, pairs):
            kept = []
            for clause, words in sus:
                p = prob_of[(clause.clause, source)]
                if words and p >= (self.long_min_clause_prob if long else self.min_clause_prob):
                    kept += [Leftover(w.word, w.start, w.end, w.negated, w.clause, p) for w in words]
                elif p >= self.clause_prob and not long:
                    kept.append(Leftover(clause.word, clause.start, clause.end, False, clause.clause, p))
            out.append(kept)
        return out

    # ----------------------------------------------------------------------------------- verdicts
    def apply(self, cfs: Sequence[Counterfactual]) -> None:
        """Read every candidate that passed its method's checks so far and record the verdict in its
        ``meta``: ``filters.complete``, ``completeness.leftovers`` and, when it fails, a note naming the
        words left."""
        todo = [cf for cf in cfs if isinstance(cf, Counterfactual) and cf.passed]
        if not todo or not any(self.task.polarity(lab) for lab in self.task.label_space.labels):
            return
        pairs = []
        for cf in todo:
            role = next((r for r in self.task.edit_roles if r in cf.fields), self.task.roles[0])
            pairs.append((cf.source.fields.get(role, ""), cf.fields.get(role, ""), cf.source.label))
        for cf, left in zip(todo, self.leftovers(pairs)):
            record_completeness(cf, left)


def record_completeness(cf: Counterfactual, left: Sequence[Leftover]) -> None:
    """Write the completeness verdict for ``cf`` (the opinions ``left`` in it) into its meta."""
    cf.meta["completeness"] = {"complete": not left, "leftovers": [x.to_json() for x in left]}
    verdicts = dict(cf.meta.get("filters") or {})
    verdicts[NAME] = not left
    notes = dict(cf.meta.get("filter_notes") or {})
    if left:
        notes[NAME] = ("an opinion of the source's polarity is left: "
                       + "; ".join(x.describe() for x in left[:3]) + (" ..." if len(left) > 3 else ""))
    record_filters(cf.meta, verdicts, notes or None)


def changed_sentences(original: str, rewrite: str) -> set[int]:
    """Indices of the sentences of ``rewrite`` whose words are no sentence of ``original``."""
    before = {word_sequence(original[a:b]) for a, b in sentence_spans(original)}
    return {n for n, (a, b) in enumerate(sentence_spans(rewrite)) if word_sequence(rewrite[a:b]) not in before}

