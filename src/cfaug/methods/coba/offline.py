"""CoBA without a language model: triples from the dependency parse, edits inside the triples, and a text
realised from the original sentences' own words.

Steps for one text (a parsed spaCy ``Doc``), given the ensemble's principal words W_p and spurious words
W_s (:mod:`cfaug.importance.ensemble`):

1. **Categories.** Each triple (:func:`cfaug.nlp.triples.extract_triples`) is *spurious* when one of its
   words is in W_s, else *principal* when one is in W_p, else *normal*. With ``lexicon_principal``, opinion
   words of the source polarity count as principal (never spurious: the lexicon says they carry the label)
   and a triple holding one, or a negated opinion word of the other polarity, is principal.
2. **Label edits** in principal triples (and, with ``edit_mixed``, in spurious triples that also hold
   principal words, whose spurious words stay untouched): an opinion word of the source polarity is
   replaced by one of the target polarity in the same word class and form (auto-CAD's lexicon proposer,
   re-ranked by how strongly the ensemble's linear model ties each proposal to the target label), or,
   when it is a predicate with no replacement ("recommend"), negated; a principal negator is removed, and
   so is (with ``lexicon_principal``) the negator of an opinion word of the target polarity ("not good" in
   a negative text becomes "good"); ratings are mirrored ("2/10" -> "9/10"). With ``negate_neutral``, a
   principal word with no polarity negates its predicate too (off by default: the ensemble's votes name
   many neutral words, "supposed", "trying", and negating them reads badly). With ``negate_prob``, that
   share of the clauses holding such opinion words is negated instead of having its words replaced
   ("was great" -> "was not great"), chosen by a seed drawn from the text. As in auto-CAD, a word in a
   name ("Great Expectations") or an adjective naming a group ("the disabled") is left alone, a manner
   adverb before a participle flips alone ("well written" -> "poorly written"), "worth" before its
   complement is negated, and with ``content_words="important"`` a lexicon noun or verb is edited only
   when the ensemble ranks it among its top words or the antonym table pairs it ("the death of" stays).
3. **Gender swap** (optional): every gendered word of the WinoBias lists takes the opposite gender.
4. **Shuffle and delete.** A sentence whose triples are all normal is a *normal sentence*: normal
   sentences are permuted among their own positions and each is deleted with ``delete_prob`` (never all
   sentences). Sentences with principal or spurious triples keep their place.
5. **Contrast repair** (``contrast_repair``, off by default): a "but" joining two parts of an edited sentence that now both
   lean to the target label becomes "and" ("the acting was weak but the plot was dull" -> "... weak and the
   plot was dull"), as people do when they rewrite a review's label.
6. **Realisation.** The edited sentences are joined in the new order. Each candidate (``candidates``)
   uses its own permutation and deletions, and the ``n``-th uses every edited word's ``n``-th best
   replacement.
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cfaug.editing.lexicon import NEGATORS, Lexicon
from cfaug.editing.manner import manner_polarity, own_flip
from cfaug.editing.negation import negate_predicate, negator_removal
from cfaug.proposers.replacements import ReplacementRequest
from cfaug.editing.scores import score_edits
from cfaug.editing.text import Edit, Token, agree_article, apply_edits
from cfaug.editing.word_roles import in_name, nominal_adjective, topical_class
from cfaug.nlp.inflect import doc_tags, match_case
from cfaug.methods.coba.categories import NORMAL, PRINCIPAL, SPURIOUS, categorise_words, permute_normal
from cfaug.nlp.triples import Triple, extract_triples


@dataclass
class Plan:
    """What CoBA does to one text: categories, label edits (alternatives per slot), gender swaps."""

    doc: Any
    triples: list[Triple]
    categories: list[str]
    sentence_category: list[str]
    principal: list[str] = field(default_factory=list)  #: principal words as used (after the lexicon rule)
    spurious: list[str] = field(default_factory=list)  #: spurious words as used
    slots: list[list[Edit]] = field(default_factory=list)  #: per edited word, alternative edits best first
    swaps: list[Edit] = field(default_factory=list)
    why_none: str = ""


def triple_words(doc: Any, t: Triple) -> list[int]:
    """Token indices of a triple: its clause (which also holds the clause's adverbs and modifiers,
    "Unfortunately", and a fragment's words, "A great night at the movies.") and its subject, predicate
    and object (a subject may lie outside the clause when it is inherited)."""
    out = dict.fromkeys(range(t.clause.start, t.clause.end))
    for span in (t.subject, t.predicate, t.object):
        if span is not None:
            out.update(dict.fromkeys(range(span.start, span.end)))
    return list(out)


def categorise(doc: Any, triples: Sequence[Triple], principal: set[str], spurious: set[str],
               lexicon: Lexicon | None, source_polarity: str | None, tokens: Sequence[Token],
               tags: Mapping[int, str]) -> list[str]:
    """spurious / principal / normal for each triple (see the module docstring); ``tokens`` and ``tags``:
    the doc as :func:`as_tokens` gives it."""
    index = [triple_words(doc, t) for t in triples]
    out = categorise_words([[doc[i].lower_ for i in ids] for ids in index], principal, spurious)
    if lexicon is not None and source_polarity:
        def carries_source(i: int) -> bool:  # an opinion word of the source label ("well written" too), or a
            pol = lexicon.polarity(doc[i].lower_)  # negated opposite one
            return (pol == source_polarity or (pol is not None and _negator_before(doc, i) is not None)
                    or manner_polarity(tokens, i, tags, lexicon) == source_polarity)

        out = [PRINCIPAL if cat == NORMAL and any(carries_source(i) for i in ids) else cat
               for cat, ids in zip(out, index)]
    return out


def sentence_categories(doc: Any, triples: Sequence[Triple], categories: Sequence[str]) -> list[str]:
    """A sentence is principal or spurious when one of its triples is (principal wins), else normal."""
    sents = list(doc.sents)
    out = [NORMAL] * len(sents)
    for t, cat in zip(triples, categories):
        if cat == PRINCIPAL or (cat == SPURIOUS and out[t.sentence] == NORMAL):
            out[t.sentence] = cat
    return out


def as_tokens(doc: Any) -> tuple[list[Token], dict[int, str]]:
    """auto-CAD tokens (character offsets, sentence index) and Penn tags by start character."""
    sent_of = {}
    for s, sent in enumerate(doc.sents):
        for tok in sent:
            sent_of[tok.i] = s
    tokens = [Token(t.text, t.idx, t.idx + len(t.text), sent_of[t.i]) for t in doc]
    return tokens, doc_tags(doc)


class OfflinePlanner:
    """Plans and realises offline CoBA rewrites (see the module docstring)."""

    def __init__(self, lexicon: Lexicon, proposer: Any, *, lexicon_principal: bool = True, edit_mixed: bool = True,
                 alternatives: int = 1, guide: Any = None, guide_weight: float = 0.0,
                 negate_neutral: bool = False, negate_prob: float = 0.0, content_words: str = "all",
                 contrast_repair: bool = False) -> None:
        self.lexicon, self.proposer = lexicon, proposer
        self.contrast_repair = contrast_repair
        self.content_words = content_words
        self.negate_neutral, self.negate_prob = negate_neutral, negate_prob
        self.lexicon_principal, self.edit_mixed, self.alternatives = lexicon_principal, edit_mixed, alternatives
        #: ``guide(words, target) -> scores``: how strongly a word pushes a classifier toward ``target``
        self.guide, self.guide_weight = guide, guide_weight

    def _rank(self, cands: Sequence[tuple[str, float]], target: str) -> list[tuple[str, float]]:
        """Proposals re-ranked by prior + ``guide_weight`` x the guide's push toward the target (scaled to
        unit spread within the proposals)."""
        if not cands or self.guide is None or not self.guide_weight:
            return list(cands)
        push = np.asarray(self.guide([c for c, _ in cands], target), dtype=float)
        push = push / (push.std() or 1.0)
        scored = [(c, s + self.guide_weight * p) for (c, s), p in zip(cands, push)]
        return sorted(scored, key=lambda cs: -cs[1])

    def plan(self, doc: Any, principal: Sequence[str], spurious: Sequence[str], source_polarity: str | None,
             target_polarity: str | None, swap: Any = None) -> Plan:
        triples = extract_triples(doc)
        p_set, s_set = set(principal), set(spurious)
        if self.lexicon_principal and source_polarity:  # the lexicon's opinion words carry the label
            moved = {w for w in s_set if self.lexicon.polarity(w) == source_polarity}
            p_set |= moved
            s_set -= moved
        tokens, tags = as_tokens(doc)
        cats = categorise(doc, triples, p_set, s_set, self.lexicon if self.lexicon_principal else None, source_polarity,
                          tokens, tags)
        plan = Plan(doc, triples, cats, sentence_categories(doc, triples, cats),
                    [w for w in dict.fromkeys([*principal, *spurious]) if w in p_set],
                    [w for w in spurious if w in s_set])
        requests: list[tuple[int, Triple, ReplacementRequest]] = []
        negated_heads: set[int] = set()
        done: set[int] = set()
        for t, cat in zip(triples, cats):
            if cat == NORMAL or (cat == SPURIOUS and not self.edit_mixed):
                continue
            # a clause whose opinion words are replaced is not also negated (that would flip it back)
            has_opinion = any(self.lexicon.polarity(doc[i].lower_) == source_polarity and doc[i].lower_ not in s_set
                              for i in triple_words(doc, t))
            for i in triple_words(doc, t):
                if i in done:
                    continue
                w = doc[i].lower_
                if w in s_set:
                    continue  # spurious words stay as they are
                if self.lexicon_principal and source_polarity and target_polarity and _negator_before(doc, i) is None:
                    # "well written" -> "poorly written", "worth seeing" -> "not worth seeing"
                    fixed = own_flip(doc.text, tokens, i, tags, self.lexicon, source_polarity)
                    if fixed is not None:
                        done.add(i)
                        plan.slots.append([fixed])
                        continue
                pol = self.lexicon.polarity(w)
                negated = _negator_before(doc, i) if pol is not None else None
                principal_word = w in p_set or (self.lexicon_principal and pol is not None and (
                    pol == source_polarity or (pol == target_polarity and negated is not None)))
                if not principal_word:
                    continue
                if pol is not None and pol == source_polarity and negated is not None:
                    done.update((i, negated))  # "not bad" in a negative text already leans to the target
                elif pol is not None and pol == source_polarity and target_polarity:
                    done.add(i)
                    if in_name(tokens, i, tags) or nominal_adjective(tokens, i, tags):
                        continue  # "Great Expectations", "the disabled and ...": no opinion here
                    if (self.content_words == "important" and w not in p_set and w not in self.lexicon.antonyms
                            and topical_class(doc[i].text, tags.get(tokens[i].start, ""))):
                        continue  # a noun or verb the ensemble does not weigh states a fact ("the death of")
                    requests.append((i, t, _request(doc, i, target_polarity, tags.get(doc[i].idx, doc[i].tag_))))
                elif pol is not None and pol == target_polarity and self.lexicon_principal:
                    if negated is not None and negated not in done:  # "not good" in a negative text: drop "not"
                        done.update((i, negated))
                        plan.slots.append([negator_removal(tokens, negated)])
                elif w in NEGATORS and w in p_set and not self._negates_source(doc, i, source_polarity):
                    done.add(i)  # "did not like it": drop the negator
                    plan.slots.append([negator_removal(tokens, i)])
                elif (self.negate_neutral and w in p_set and pol is None and not has_opinion
                      and t.head not in negated_heads):
                    negated_heads.add(t.head)
                    edit = self._flip_predicate(doc, tokens, tags, t)
                    if edit is not None:
                        done.add(i)
                        plan.slots.append([edit])
        if requests and self.negate_prob > 0:  # some clauses are negated instead ("was great" -> "was not great")
            rng = random.Random(zlib.crc32(doc.text.encode("utf-8")))
            heads = {t.head: t for _, t, _ in requests if not t.negated}
            for head in sorted(heads):
                if rng.random() < self.negate_prob and head not in negated_heads:
                    edit = self._flip_predicate(doc, tokens, tags, heads[head])
                    if edit is not None:
                        negated_heads.add(head)
                        plan.slots.append([edit])
            requests = [(i, t, r) for i, t, r in requests if t.head not in negated_heads]
        if requests:
            proposals = self.proposer.propose([r for _, _, r in requests])
            replaced: set[int] = set()  # heads of triples with a replacement
            unplaced = []
            for (i, t, _), cands in zip(requests, proposals):
                tok = tokens[i]
                alts = [agree_article(doc.text, tokens, i, Edit(tok.start, tok.end, match_case(tok.text, c), tok.text,
                                                                "replace"))
                        for c, _ in self._rank(cands, target_polarity or "")[: self.alternatives]]
                if alts:
                    plan.slots.append(alts)
                    replaced.add(t.head)
                elif t.predicate.start <= i < t.predicate.end:
                    unplaced.append(t)
            for t in unplaced:  # a predicate with no replacement ("recommend") is negated, once per clause
                if t.head not in replaced and t.head not in negated_heads:
                    negated_heads.add(t.head)
                    edit = self._flip_predicate(doc, tokens, tags, t)
                    if edit is not None:
                        plan.slots.append([edit])
        taken = {e.start for alts in plan.slots for e in alts}
        plan.slots += [[e] for e in score_edits(doc.text, target_polarity) if e.start not in taken]
        if self.contrast_repair and plan.slots and target_polarity:
            plan.slots += [[e] for e in contrast_repairs(doc, [alts[0] for alts in plan.slots], self.lexicon,
                                                         target_polarity)]
        if swap is not None:
            new_words = swap([t.text for t in doc], [t.tag_ for t in doc])
            taken = {e.start for alts in plan.slots for e in alts}
            plan.swaps = [Edit(tokens[i].start, tokens[i].end, new, tokens[i].text, "gender")
                          for i, new in enumerate(new_words) if new != doc[i].text and tokens[i].start not in taken]
        if not plan.slots:
            plan.why_none = ("no principal word or opinion word of the source label in the text's triples"
                             if PRINCIPAL not in cats else "no replacement or negation found for the principal words")
        return plan

    def _negates_source(self, doc: Any, i: int, source_polarity: str | None, window: int = 3) -> bool:
        """Whether the negator ``doc[i]`` negates an opinion word of the source polarity ("not bad" in a
        negative text): removing it would push the text further toward the source."""
        end = min(len(doc), i + 1 + window, doc[i].sent.end)
        return any(self.lexicon.polarity(doc[j].lower_) == source_polarity for j in range(i + 1, end))

    @staticmethod
    def _flip_predicate(doc: Any, tokens: Sequence[Token], tags: dict[int, str], t: Triple) -> Edit | None:
        """Negate the triple's predicate, or remove the negator it carries."""
        pred = range(t.predicate.start, t.predicate.end)
        if t.negated:
            for i in pred:
                if doc[i].lower_ in NEGATORS:
                    return negator_removal(tokens, i)
            return None
        return negate_predicate(tokens, t.head, tags)

    def realise(self, plan: Plan, text: str, rng: random.Random, delete_prob: float, shuffle: bool,
                alternative: int = 0) -> tuple[str, dict[str, Any]]:
        """One candidate text and what was done to make it."""
        edits = [alts[min(alternative, len(alts) - 1)] for alts in plan.slots] + plan.swaps
        sents = [(s.start_char, s.end_char) for s in plan.doc.sents]
        order, deleted = permute_normal(plan.sentence_category, rng, delete_prob, shuffle)
        # the text between sentences stays as it was: the q-th sentence written is preceded by the text that
        # preceded the q-th sentence of the original, so in-place edits leave every other character alone
        gaps = [text[:sents[0][0]]] + [text[sents[q - 1][1]:sents[q][0]] for q in range(1, len(sents))]
        out = []
        for q, k in enumerate(order):
            a, b = sents[k]
            local = [Edit(e.start - a, e.end - a, e.new, e.old, e.kind) for e in edits if a <= e.start and e.end <= b]
            sentence = apply_edits(text[a:b], local)
            if sentence.strip() or not text[a:b].strip():  # a sentence the edits emptied goes
                out.append((gaps[q] if out or q == 0 else gaps[0]) + sentence)
        info = {"order": order, "deleted": deleted,
                "edits": [e.to_json() for e in sorted(edits, key=lambda e: e.start)]}
        return "".join(out) + text[sents[-1][1]:], info


def domain_lexicon(lexicon: Lexicon, push: Any, margin: float) -> tuple[Lexicon, list[str]]:
    """The lexicon without the words the data contradicts: a positive word that the guide model ties to the
    negative label by more than ``margin`` (``push(words, "positive") < -margin``), or a negative word tied
    to the positive label by more than ``margin``. Words the model does not know are kept. Returns the new
    lexicon and the dropped words."""
    words = sorted(lexicon.positive | lexicon.negative)
    toward_positive = push(words, "positive")
    dropped = [w for w, p in zip(words, toward_positive)
               if (w in lexicon.positive and p < -margin) or (w in lexicon.negative and p > margin)]
    gone = set(dropped)
    return Lexicon(lexicon.positive - gone, lexicon.negative - gone, lexicon.antonyms), dropped


def triple_texts(plan: Plan, text: str, edits: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each triple before and after the edits, with its category (for ``meta``)."""
    out = []
    by_start = [(e["start"], e["end"], e["new"]) for e in edits]
    for t, cat in zip(plan.triples, plan.categories):
        before, after = [], []
        for span in (t.subject, t.predicate, t.object):
            if span is None:
                before.append("")
                after.append("")
                continue
            a, b = span.start_char, span.end_char
            local = [Edit(s - a, e - a, n, text[s:e], "x") for s, e, n in by_start if a <= s and e <= b]
            before.append(text[a:b])
            after.append(apply_edits(text[a:b], local) if local else text[a:b])
        out.append({"sentence": t.sentence, "category": cat, "before": before, "after": after})
    return out


#: contrastive conjunctions and what replaces them when the clauses they join come to agree
CONTRASTIVE = {"but": "and"}
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|n't")


def side_polarity(words: Sequence[str], lexicon: Lexicon) -> int:
    """+1 / -1 / 0: the sign of the lexicon's positive minus negative words in ``words`` (lower-cased), a word
    after a negator within three words counting for the other side ("not good" is negative)."""
    total = 0
    for k, w in enumerate(words):
        pol = lexicon.polarity(w)
        if pol is None:
            continue
        sign = 1 if pol == "positive" else -1
        if any(x in NEGATORS for x in words[max(0, k - 3):k]):  # NEGATORS holds "n't" too
            sign = -sign
        total += sign
    return (total > 0) - (total < 0)


def contrast_repairs(doc: Any, edits: Sequence[Edit], lexicon: Lexicon, target_polarity: str) -> list[Edit]:
    """Edits that turn a contrastive conjunction into a plain one ("but" -> "and") where the label edits
    made the clauses it joins agree: in a sentence the edits touch, the words before it and the words after
    it (as edited) both lean to the target label. "The acting was superb but the plot was dull", turned
    negative by "superb" -> "weak", reads "The acting was weak and the plot was dull"."""
    want = 1 if target_polarity == "positive" else -1
    text = doc.text
    out = []
    for tok in doc:
        new_word = CONTRASTIVE.get(tok.lower_)
        if new_word is None or tok.dep_ != "cc":
            continue
        sent = tok.sent
        a, b, c, d = sent.start_char, tok.idx, tok.idx + len(tok.text), sent.end_char
        inside = [e for e in edits if a <= e.start and e.end <= d and not (e.start < c and e.end > b)]
        if not inside:
            continue
        if (side_polarity(_edited_words(text, a, b, inside), lexicon) == want
                == side_polarity(_edited_words(text, c, d, inside), lexicon)):
            out.append(Edit(b, c, match_case(tok.text, new_word), tok.text, "replace"))
    return out


def _edited_words(text: str, lo: int, hi: int, edits: Sequence[Edit]) -> list[str]:
    """The lower-cased words of ``text[lo:hi]`` once the ``edits`` that lie inside it are applied."""
    local = [Edit(e.start - lo, e.end - lo, e.new, e.old, e.kind) for e in edits if lo <= e.start and e.end <= hi]
    return _WORD.findall(apply_edits(text[lo:hi], local).lower())


def _negator_before(doc: Any, i: int, window: int = 3) -> int | None:
    """The index of a negator up to ``window`` tokens before ``doc[i]`` in its sentence ("not very good")."""
    start = doc[i].sent.start
    for j in range(i - 1, max(start, i - window) - 1, -1):
        if doc[j].lower_ in NEGATORS:
            return j
        if doc[j].is_punct:
            return None
    return None


def _request(doc: Any, i: int, target_polarity: str, tag: str) -> ReplacementRequest:
    tok = doc[i]
    left = doc[i - 1].lower_ if i > 0 and doc[i - 1].sent.start == tok.sent.start else "<s>"
    right = doc[i + 1].lower_ if i + 1 < len(doc) and doc[i + 1].sent.start == tok.sent.start else "</s>"
    return ReplacementRequest(tok.lower_, left, right, target_polarity, tag=tag)
