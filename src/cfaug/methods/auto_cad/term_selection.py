"""Which words of each text auto-CAD edits: the causal terms of the source label's polarity
(:mod:`~cfaug.methods.auto_cad.causal_terms`) less names and groups of people named by an adjective, plus
the manner adverbs no lexicon lists, each scored by Eq. 1 over its sampled contexts; with
``content_words=important`` the nouns and verbs C does not weigh stay as facts of the text
(:func:`weighed_terms`)."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

import numpy as np

from cfaug.data.records import WorkItem
from cfaug.data.tasks import Task
from cfaug.editing.lexicon import NEGATORS, Lexicon
from cfaug.editing.manner import manner_polarity
from cfaug.editing.negation import intent_negation, negated_before
from cfaug.editing.ngram import BigramModel
from cfaug.editing.text import Token, sentence_members, tokenize
from cfaug.editing.word_roles import (degree_modifier, in_compound, in_name, intensifying_idiom, names_a_kind,
                                     nominal_adjective, topical_class)
from cfaug.methods.auto_cad.causal_terms import CausalTerm, build_contexts, find_candidates, score_terms
from cfaug.methods.auto_cad.config import AutoCADConfig
from cfaug.nlp.inflect import doc_tags, usually


def tag_texts(tagger: Any, texts: Sequence[str]) -> list[dict[int, str]]:
    """Penn Treebank tag of every token of each text, keyed by its start character (empty without a
    tagger)."""
    if tagger is None:
        return [{} for _ in texts]
    return [doc_tags(doc) for doc in tagger.pipe(texts, batch_size=64)]


def select_terms(items: Sequence[WorkItem], tags: Sequence[dict[int, str]], seeds: Sequence[int], task: Task,
                 clf: Any, config: AutoCADConfig, lexicon: Lexicon, bigram: BigramModel | None, *,
                 manner: bool) -> tuple[list[tuple[list[Token], list[CausalTerm], int]], list[int]]:
    """Every item's (tokens, causal terms scored by ``clf``, column of its label), and how many opinion words
    of each were left alone as topical nouns and verbs. ``tags``: each text's Penn Treebank tags by token
    start; ``seeds``: each item's seed for sampling contexts; ``manner``: whether a tagger reads the manner
    adverbs (which then become terms too)."""
    c = config
    labels = list(clf.labels)
    docs = []
    for item, tag, seed in zip(items, tags, seeds):
        tokens = tokenize(item.record.text())
        src_pol, tgt_pol = task.polarity(item.record.label), task.polarity(item.target)
        terms = (find_candidates(tokens, lexicon, src_pol, bare_negations=c.negations == "all")
                 if src_pol and tgt_pol else [])
        # a name is not an opinion ("Hot Millions", "Great Expectations"), nor a group of people named by an
        # adjective ("a message about the disabled"): neither is edited
        terms = [t for t in terms if t.kind != "word"
                 or not (in_name(tokens, t.head, tag) or nominal_adjective(tokens, t.head, tag)
                         or in_compound(tokens, t.head))]
        if src_pol and tgt_pol and manner and c.rep_selection == "score":
            terms += _manner_terms(tokens, terms, tag, src_pol, lexicon)
            if c.promises and tgt_pol == "negative":
                promises = _promise_terms(tokens, terms, tag)
                # "would recommend" is taken back whole ("would never recommend"), not its verb replaced
                held = {j for t in promises for j in t.phrase}
                terms = [t for t in terms if t.kind != "word" or t.head not in held] + promises
        if manner:
            # "incredibly nice" -> "incredibly nasty" (not "badly nasty"); "bored to death" keeps "death"
            edited = {t.head for t in terms if t.kind == "word"}
            terms = [t for t in terms if t.kind != "word" or not (degree_modifier(tokens, t.head, tag, edited)
                                                                   or intensifying_idiom(tokens, t.head, tag)
                                                                   or names_a_kind(tokens, t.head, tag))]
            terms = drop_negated_subjects(tokens, terms, lexicon)
        _sample_contexts(tokens, terms, np.random.default_rng(seed), c, bigram)
        col = labels.index(item.record.label) if item.record.label in labels else 0
        docs.append((tokens, terms, col))
    if c.causal_terms == "lexicon+classifier" and manner:
        # a short text, or one the lexicon finds nothing in; a long review has opinion words enough, and
        # more edits there change its facts
        wanted = [bool(task.polarity(it.record.label) and task.polarity(it.target))
                  and (not terms or sum(t.is_word for t in tokens) <= c.classifier_terms_max_words)
                  for it, (tokens, terms, _) in zip(items, docs)]
        found = classifier_terms(docs, tags, wanted, clf, lexicon, c.classifier_term_min, c.classifier_term_prob)
        for (tokens, terms, _), new, seed in zip(docs, found, seeds):
            _sample_contexts(tokens, new, np.random.default_rng(seed + 7), c, bigram)
            terms += new
    score_terms(docs, clf.predict_proba)
    topical = [0] * len(items)  # terms left alone as topical nouns and verbs, per item
    if c.content_words == "important":
        for i, ((tokens, terms, _), tag) in enumerate(zip(docs, tags)):
            kept = weighed_terms(tokens, terms, tag, lexicon.antonyms, c.content_min_share)
            topical[i] = len(terms) - len(kept)
            terms[:] = kept
    return docs, topical


#: words that may stand between an opinion word and the negator of its verb ("the problem is not", "my
#: problem really isn't")
_AUXILIARIES = frozenset({"is", "was", "are", "were", "'s", "be", "been", "being", "does", "did", "do", "has",
                          "have", "had", "really", "just", "even", "actually", "certainly", "still"})


def drop_negated_subjects(tokens: Sequence[Token], terms: Sequence[CausalTerm], lexicon: Lexicon) -> list[CausalTerm]:
    """``terms`` less an opinion word that is the subject of a negated verb, and that verb's bare negator ("my
    problem isn't with the cast", "the trouble is not the acting"): the clause says the opposite of the word,
    so it carries no opinion of the word's polarity to flip. Editing both wrote "my progress is with the
    cast"; either alone reads no better ("my joy isn't with the cast")."""
    word_at = {t.head: t for t in terms if t.kind == "word"}
    dropped: set[int] = set()
    for t in terms:
        if t.kind != "negation" or _negates_opinion(tokens, t, lexicon):
            continue
        j = t.head - 1
        while j >= 0 and tokens[j].sentence == tokens[t.head].sentence and tokens[j].lower in _AUXILIARIES:
            j -= 1
        if j >= 0 and j < t.head - 1 and j in word_at:
            dropped.update({id(t), id(word_at[j])})
    return [t for t in terms if id(t) not in dropped]


def _negates_opinion(tokens: Sequence[Token], term: CausalTerm, lexicon: Lexicon) -> bool:
    return any(lexicon.polarity(tokens[j].text) for j in term.phrase[1:])


def _sample_contexts(tokens: Sequence[Token], terms: Sequence[CausalTerm], rng: np.random.Generator,
                     config: AutoCADConfig, bigram: BigramModel | None) -> None:
    """Give each of ``terms`` its Eq. 1 contexts, drawn with ``rng`` as ``config`` says."""
    for term in terms:
        term.contexts = build_contexts(tokens, term, config.context_samples, config.context_keep, rng,
                                       lm=bigram if config.contexts == "lm" else None, window=config.context_window)


#: Penn tags of the words C's sensitivity may make terms: adjectives, and -ly adverbs and participles that
#: usually are adjectives ("overcooked", "barely"); nouns and other verbs are facts of the text more often
#: than opinions ("I left my purchases", "I ordered a salad instead")
ADJECTIVE_TAGS = frozenset({"JJ", "JJR", "JJS"})
_ADVERB_TAGS = frozenset({"RB", "RBR", "RBS"})
_PARTICIPLE_TAGS = frozenset({"VBN", "VBD"})
#: verbs and adverbs that carry no opinion of their own whatever a classifier learnt of them
_FUNCTION_WORDS = frozenset({"be", "is", "was", "are", "were", "been", "being", "am", "have", "has", "had", "do",
                             "does", "did", "get", "got", "go", "went", "come", "came", "say", "said", "make", "made",
                             "take", "took", "very", "so", "too", "just", "also", "even", "again", "here", "there",
                             "then", "now", "only", "still", "ever", "back", "up", "out", "down", "off", "over",
                             "away", "as", "much", "more", "most", "really", "quite", "pretty", "all", "n't", "not", "same",
                             "other", "only", "first", "last", "own", "whole", "entire", "next", "such", "many",
                             "few", "several", "certain", "usual", "usually", "actually", "probably", "finally",
                             "already", "recently", "currently", "early", "late", "daily", "nearly", "mostly"})


def classifier_terms(docs: Sequence[tuple[list[Token], list[CausalTerm], int]], tags: Sequence[Mapping[int, str]],
                     polar: Sequence[bool], clf: Any, lexicon: Lexicon, min_drop: float,
                     min_prob: float) -> list[list[CausalTerm]]:
    """Terms found by C's sensitivity, beyond the lexicon (``causal_terms=lexicon+classifier``): in each
    document of ``docs`` (tokens, terms so far, label column) whose source and target have a polarity
    (``polar``), the adjectives, adverbs and main verbs (by ``tags``) that are no lexicon word, name or term
    already, and not negated, such that removing the word from its sentence lowers C's probability of the
    label by at least ``min_drop`` of it, and C reads the word alone as the label's with at least
    ``min_prob``. All sentences, sentences without a word and single words go to C in one call."""
    texts: dict[str, int] = {}
    asks: list[tuple[int, int, int, int, int]] = []  # (doc, token, sentence row, without row, word row)
    for d, ((tokens, terms, _), tag, ok) in enumerate(zip(docs, tags, polar)):
        if not ok:
            continue
        taken = {j for t in terms for j in t.phrase}
        members = sentence_members(tokens)
        for j, tok in enumerate(tokens):
            low = tok.lower
            if (j in taken or not tok.text.isalpha() or len(low) < 3 or low in _FUNCTION_WORDS
                    or not opinion_class(low, tag.get(tok.start, "")) or lexicon.polarity(low)
                    or low in NEGATORS or in_name(tokens, j, tag) or in_compound(tokens, j)
                    or negated_before(tokens, j)):
                continue
            words = [tokens[k].text for k in members[tok.sentence]]
            without = [tokens[k].text for k in members[tok.sentence] if k != j]
            rows = [texts.setdefault(" ".join(w), len(texts)) for w in (words, without, [low])]
            asks.append((d, j, *rows))
    out: list[list[CausalTerm]] = [[] for _ in docs]
    if not asks:
        return out
    probs = np.clip(clf.predict_proba(list(texts)), 1e-6, 1 - 1e-6)
    logit = np.log(probs) - np.log1p(-probs)
    for d, j, full, without, alone in asks:
        col = docs[d][2]
        if logit[full, col] - logit[without, col] >= min_drop and probs[alone, col] >= min_prob:
            out[d].append(CausalTerm(head=j, phrase=(j,), kind="word", source="classifier"))
    return out


def opinion_class(word: str, tag: str) -> bool:
    """Whether the Penn ``tag`` makes ``word`` an adjective, an adverb in -ly, or a participle usually used
    as an adjective: the classes a word found by C's sensitivity must have (see :data:`ADJECTIVE_TAGS`)."""
    if tag in ADJECTIVE_TAGS:
        return True
    if tag in _ADVERB_TAGS:
        return word.endswith("ly")
    return tag in _PARTICIPLE_TAGS and usually(word, "ADJ")


def _promise_terms(tokens: Sequence[Token], terms: Sequence[CausalTerm],
                   tags: Mapping[int, str]) -> list[CausalTerm]:
    """Terms for the promises and plans of a positive text ("we will definitely be back"; see
    :func:`~cfaug.editing.negation.intent_negation`) that share no token with another term but an opinion
    word ("would recommend"), which the promise then replaces."""
    taken = {j for t in terms if t.kind != "word" for j in t.phrase}
    out = []
    for j in range(len(tokens)):
        found = intent_negation(tokens, j, dict(tags))
        if found is not None and not taken & set(found[0]):
            out.append(CausalTerm(head=j, phrase=found[0], kind="promise"))
            taken |= set(found[0])
    return out


def _manner_terms(tokens: Sequence[Token], terms: Sequence[CausalTerm], tags: Mapping[int, str],
                  polarity: str, lexicon: Lexicon) -> list[CausalTerm]:
    """Terms for the manner adverbs of ``polarity`` that no lexicon lists ("well written",
    "superbly-crafted"; see :mod:`~cfaug.editing.manner`), unless negated ("not well written")."""
    taken = {j for t in terms for j in t.phrase}
    return [CausalTerm(head=j, phrase=(j,), kind="word") for j, tok in enumerate(tokens)
            if tok.is_word and j not in taken and not negated_before(tokens, j)
            and manner_polarity(tokens, j, tags, lexicon) == polarity]


def weighed_terms(tokens: Sequence[Token], terms: Sequence[CausalTerm], tags: Mapping[int, str],
                  antonyms: Container[str], min_share: float = 0.0) -> list[CausalTerm]:
    """``content_words=important``: the ``terms`` left after dropping the nouns and verbs (by the Penn
    ``tags``, keyed by token start; :func:`topical_class`) that C does not weigh: those with Eq. 1
    importance at most 0, or under ``min_share`` of the most important term's, unless ``antonyms`` pairs
    them. Other terms (adjectives, adverbs, negations, scores) are all kept."""
    floor = max(0.0, min_share * max((t.importance for t in terms), default=0.0))
    return [t for t in terms if t.kind != "word" or t.importance > floor or tokens[t.head].lower in antonyms
            or not topical_class(tokens[t.head].text, tags.get(tokens[t.head].start, ""))]
