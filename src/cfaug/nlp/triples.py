"""(subject, predicate, object) triples read off a dependency parse, sentence by sentence.

CoBA breaks a text into semantic triples, edits some of them (negates, replaces, drops, moves) and rebuilds
a text from the original words. This module is the offline extractor: it reads UD dependency labels (the
bundled ``en_ewt`` pipeline is trained on UD English-EWT) and returns token spans of the parsed Doc, so a
caller can always map a triple back to the exact words and characters of the text.

Which tokens head a clause (each yields one triple, or one per conjoined object):

* the ``ROOT`` of every sentence (always: a sentence without a verb is a *fragment*, see below);
* a verb or copular head (a token that is a VERB/AUX, or has a ``cop`` or subject dependent) labelled
  ``conj`` (conjoined predicates), ``ccomp``, ``advcl``, ``parataxis`` (with any subtype) or ``acl:relcl``.

The parts of a triple:

* **subject**: the head's ``nsubj``/``nsubj:pass``/``csubj`` (passive subjects are subjects). A conjoined
  predicate without a subject of its own inherits the subject of its first conjunct ("I loved the plot and
  hated the ending" -> (I, loved, the plot), (I, hated, the ending)). In a relative clause the subject is the
  noun the clause modifies when the clause's own subject is the relative pronoun or missing ("the staff, who
  were friendly" -> (The staff, were, friendly)). With an expletive ("There is a problem") the subject is
  "There" and the real subject becomes the object. None for imperatives and other clauses without one.
* **predicate**: the verb group, one contiguous span: auxiliaries, the negator (not, n't, never, no) and a
  particle ("did not like", "has been", "gave up"); for a copular clause the copula with its auxiliaries and
  negator ("was", "is not"). When the object is an oblique (``obl``) whose preposition directly follows the
  verb group, the preposition joins the predicate: "We are in a restaurant" -> (We, are in, a restaurant),
  "The batteries died after two weeks" -> (The batteries, died after, two weeks).
* **object**: the first of ``obj``, an expletive's subject, ``xcomp``, ``ccomp``, an ``obl`` after the verb
  that has a preposition (``obl:agent`` too); for a copular clause the complement ("the food was cold" ->
  (the food, was, cold); "it is not a good film" -> (it, is not, a good film), negated). In a relative
  clause whose object is the relative pronoun, or missing while the clause has a subject of its own, the
  object is the modified noun ("the pizza they served" -> (they, served, the pizza)). Conjoined objects and
  conjoined copular complements split into one triple each ("we ordered soup and bread" -> (we, ordered,
  soup), (we, ordered, bread)). None for intransitive clauses.
* **clause**: the contiguous span around the head holding the clause's own words: the head's dependents
  (adverbs, obliques, ...) that are no clauses of their own, with punctuation, coordinating conjunctions
  and subordinators (``mark``) at the edges left out, widened to cover its own subject, predicate and
  object(s) (so a relative clause inside the subject, "The place, which opened last year, serves good
  coffee", lies inside the main clause's span). A subject or object the clause does not contain (inherited
  by a conjoined predicate, or the noun a relative clause modifies) is not part of it: the clause of "hated"
  in "I loved the plot and hated the ending" is "hated the ending", so deleting a clause span deletes just
  that clause. The triples of conjoined objects share the clause of their predicate.

Subject and object spans are the syntactic subtree of the argument's head, stopped at every nested clause
that yields its own triple (an object never swallows a relative clause or a conjoined clause), and cut to
the contiguous part around the head. A ``ccomp`` object keeps the clause it heads ("I think that the
service is slow" -> (I, think, that the service is slow) and (the service, is, slow)).

``negated`` is true when the head, its auxiliaries or its copula have a negator dependent, even when word
order keeps the negator out of the predicate span ("Never have I seen such a thing" -> predicate "seen").

A *fragment* (a sentence whose root is no verb and has no copula or subject: "Great movie!") yields one
triple with subject None, the root token as predicate, object None and the whole sentence as clause.

The triples are only as good as the parse: a mis-tagged verb ("looked pale" with "pale" as a verb) or a
misattached clause gives odd triples, and an inverted verb group ("Never have I seen") loses the words
before the subject. Sentence boundaries are spaCy's.

>>> from cfaug.nlp import load_pipeline
>>> doc = load_pipeline()("I did not like the soup and hated the bread.")
>>> [t.as_tuple() for t in extract_triples(doc)]
[('I', 'did not like', 'the soup'), ('I', 'hated', 'the bread')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

#: lower-cased words that negate the predicate they depend on
NEGATORS = frozenset({"not", "n't", "never", "no"})

_SUBJECTS = {"nsubj", "csubj"}
_CLAUSAL = {"ccomp", "advcl", "parataxis"}
_RELATIVE_PRONOUNS = {"who", "whom", "which", "that", "whose"}
_EDGE_DEPS = {"punct", "cc", "mark"}
#: dependents of a copular head that are not part of its complement (the object)
_NOT_COMPLEMENT = {"nsubj", "csubj", "cop", "aux", "mark", "punct", "cc", "conj", "expl", "discourse",
                   "vocative", "parataxis", "advcl", "ccomp", "dep", "reparandum"}
_WORD = re.compile(r"\w+(?:['’]\w+)*|n['’]t")


@dataclass(frozen=True)
class Span:
    """Tokens ``[start, end)`` of a Doc, their characters ``[start_char, end_char)`` and text."""

    start: int
    end: int
    start_char: int
    end_char: int
    text: str

    def __len__(self) -> int:
        return self.end - self.start


@dataclass
class Triple:
    """One (subject, predicate, object) triple of a clause; see the module docstring for the rules."""

    sentence: int
    subject: Span | None
    predicate: Span
    object: Span | None
    clause: Span
    negated: bool
    head: int

    def words(self) -> list[str]:
        """Lower-cased words of the subject, predicate and object, in that order."""
        return [w for part in (self.subject, self.predicate, self.object) if part is not None
                for w in _WORD.findall(part.text.lower())]

    def as_tuple(self) -> tuple[str, str, str]:
        """The texts of subject, predicate and object (``""`` for a missing part)."""
        return tuple(part.text if part is not None else "" for part in (self.subject, self.predicate, self.object))


def _span(doc: Doc, start: int, end: int) -> Span:
    s = doc[start:end]
    return Span(start, end, s.start_char, s.end_char, s.text)


def _base(dep: str) -> str:
    return dep.split(":")[0]


def _is_negator(t: Token) -> bool:
    return t.lower_.replace("’", "'") in NEGATORS and _base(t.dep_) in {"advmod", "neg"}


def _predicate_like(t: Token) -> bool:
    return t.pos_ in {"VERB", "AUX"} or any(c.dep_ == "cop" or _base(c.dep_) in _SUBJECTS for c in t.children)


def _is_clause_head(t: Token) -> bool:
    if t.dep_ == "ROOT" or t.head.i == t.i:
        return True
    if t.dep_ == "acl:relcl" or _base(t.dep_) in _CLAUSAL | {"conj"}:
        return _predicate_like(t)
    return False


def _run(indices: Iterable[int], anchor: int, trim: Any = None) -> tuple[int, int]:
    """The maximal run ``[start, end)`` of consecutive ``indices`` containing ``anchor``, with tokens for
    which ``trim(i)`` is true cut from both edges (never ``anchor``)."""
    s = set(indices) | {anchor}
    start = end = anchor
    while start - 1 in s:
        start -= 1
    while end + 1 in s:
        end += 1
    if trim is not None:
        while start < anchor and trim(start):
            start += 1
        while end > anchor and trim(end):
            end -= 1
    return start, end + 1


class _Sentence:
    """Triples of one sentence (a spaCy Span with its tokens' heads inside it)."""

    def __init__(self, doc: Doc, sent, index: int):
        self.doc, self.sent, self.index = doc, sent, index
        self.heads = [t for t in sent if _is_clause_head(t)]
        self.boundary = {t.i for t in self.heads}
        self._subjects: dict[int, tuple[Token | None, bool]] = {}

    # ----- spans
    def _trim_edge(self, i: int) -> bool:
        """Clause edges lose punctuation, conjunctions and subordinators."""
        t = self.doc[i]
        return t.dep_ in _EDGE_DEPS or t.is_punct or t.is_space

    def _trim_arg(self, i: int) -> bool:
        """Argument edges lose punctuation and conjunctions (an infinitive's "to" stays)."""
        t = self.doc[i]
        return t.dep_ in {"punct", "cc"} or t.is_punct or t.is_space

    def cut_subtree(self, tok: Token, skip: set[int] = frozenset()) -> set[int]:
        """Indices of ``tok``'s subtree, stopping at nested clause heads and at the tokens in ``skip``."""
        out: set[int] = set()
        stack = [tok]
        while stack:
            t = stack.pop()
            out.add(t.i)
            for c in t.children:
                if c.i in self.boundary or c.i in skip:
                    continue
                stack.append(c)
        return out

    def arg_span(self, tok: Token, skip: set[int] = frozenset()) -> tuple[int, int]:
        return _run(self.cut_subtree(tok, skip), tok.i, trim=self._trim_arg)

    def noun_span(self, tok: Token) -> tuple[int, int]:
        """A subject, or the noun a relative clause stands for, without a preposition before it ("like
        something that Hollywood does" -> "something")."""
        return self.arg_span(tok, {c.i for c in tok.children if c.dep_ == "case" and c.i < tok.i})

    # ----- parts
    def subject(self, h: Token) -> tuple[Token | None, bool]:
        """The subject head of clause ``h`` and whether it is the clause's own dependent."""
        if h.i in self._subjects:
            return self._subjects[h.i]
        self._subjects[h.i] = (None, False)   # guards against cycles in odd parses
        own = [c for c in h.children if _base(c.dep_) in _SUBJECTS]
        own.sort(key=lambda c: (c.dep_ != "nsubj" and c.dep_ != "nsubj:pass", c.i))
        result: tuple[Token | None, bool] = (None, False)
        if own and not (self._in_relative(h) and own[0].lower_ in _RELATIVE_PRONOUNS):
            result = (own[0], True)
        elif self._in_relative(h):
            result = (self._antecedent(h), False)
        elif _base(h.dep_) == "conj":
            first = h
            while _base(first.dep_) == "conj" and first.head.i != first.i:
                first = first.head
            up = first
            while not _is_clause_head(up) and up.head.i != up.i:
                up = up.head
            result = (self.subject(up)[0], False) if up.i != h.i else (None, False)
        self._subjects[h.i] = result
        return result

    def _in_relative(self, h: Token) -> bool:
        return h.dep_ == "acl:relcl"

    def _antecedent(self, h: Token) -> Token:
        return h.head

    def predicate(self, h: Token, copula: Token | None) -> tuple[set[int], int]:
        """Indices of the verb group and its anchor token."""
        anchor = copula if copula is not None else h
        core = [c for c in h.children if _base(c.dep_) == "aux" or c.dep_ == "cop"]
        tokens = {c.i for c in core}
        if copula is None:
            tokens.add(h.i)
            tokens |= {c.i for c in h.children if c.dep_ == "compound:prt"}
        for t in [h, *core]:
            tokens |= {c.i for c in t.children if _is_negator(c)}
        return tokens, anchor.i

    def predicate_span(self, h: Token, tokens: set[int], anchor: int) -> tuple[int, int]:
        lo, hi = min(tokens), max(tokens)
        # adverbs between the auxiliaries and the verb may stay inside ("have really enjoyed")
        allowed = set(tokens) | {i for i in range(lo, hi + 1)
                                 if self.doc[i].dep_ == "advmod" and self.doc[i].head.i in tokens | {h.i}
                                 and not list(self.doc[i].children)}
        start, end = _run(allowed, anchor, trim=lambda i: i not in tokens)
        return start, end

    def negated(self, h: Token) -> bool:
        group = [h, *(c for c in h.children if _base(c.dep_) == "aux" or c.dep_ == "cop")]
        return any(_is_negator(c) for t in group for c in t.children)


def _case_of(tok: Token) -> list[Token]:
    """The preposition of an oblique/complement (with its ``fixed`` parts), if it comes before the head."""
    for c in tok.children:
        if c.dep_ == "case" and c.i < tok.i:
            return sorted([c, *(f for f in c.children if f.dep_ == "fixed")], key=lambda t: t.i)
    return []


def _split_conjuncts(tok: Token, sentence: _Sentence) -> list[Token]:
    """``tok`` and its conjuncts that are no clauses of their own, in order (objects that split)."""
    out = [tok]
    for c in tok.children:
        if c.dep_ == "conj" and c.i not in sentence.boundary:
            out.extend(_split_conjuncts(c, sentence))
    return sorted(out, key=lambda t: t.i)


def _clause_triples(s: _Sentence, h: Token) -> list[Triple]:
    doc = s.doc
    copula = next((c for c in h.children if c.dep_ == "cop"), None)
    subj, own_subject = s.subject(h)
    verbal = copula is None and h.pos_ in {"VERB", "AUX"}
    if copula is None and not verbal and subj is None:   # a fragment: "Great movie!"
        return _fragment(s, h)

    pred_tokens, anchor = s.predicate(h, copula)
    if not verbal and copula is None:        # a subject with a non-verbal predicate and no copula
        pred_tokens, anchor = {h.i}, h.i
    p_start, p_end = s.predicate_span(h, pred_tokens, anchor)
    pred_set = set(range(p_start, p_end))

    # objects: (head token, token indices)
    objects: list[tuple[int, set[int]]] = []
    subj_tokens: set[int] = set()
    expl = next((c for c in h.children if c.dep_ == "expl"), None)
    if subj is not None:
        if verbal and expl is not None and own_subject and subj.i > h.i:
            object_head, subj = subj, expl
        else:
            object_head = None
        a, b = s.noun_span(subj)
        subj_tokens = set(range(a, b))
    else:
        object_head = None

    joined_case: set[int] = set()
    if copula is not None:
        conjuncts = _split_conjuncts(h, s)
        first = conjuncts[0]
        case = _case_of(h)
        if case and case[0].i == p_end and all(t.i == case[0].i + k for k, t in enumerate(case)):
            joined_case = {t.i for t in case}
            p_end = case[-1].i + 1
        skip = {c.i for c in h.children if _base(c.dep_) in _NOT_COMPLEMENT or c.dep_ == "cop"}
        skip |= pred_set | joined_case | subj_tokens
        comp = s.cut_subtree(h, skip) - skip
        objects.append((h.i, set(range(*_run(comp, h.i, trim=s._trim_arg)))))
        for c in conjuncts:
            if c.i != first.i:
                objects.append((c.i, _conjunct_tokens(s, c)))
    rel_object = None
    if copula is None and verbal:
        if object_head is None:
            object_head, rel_object = _verb_object(s, h, own_subject)
        if rel_object is not None:
            a, b = s.noun_span(rel_object)
            objects.append((rel_object.i, set(range(a, b))))
        elif object_head is not None:
            conjuncts = _split_conjuncts(object_head, s)
            skip = {c.i for c in conjuncts if c.i != object_head.i}
            if _base(object_head.dep_) == "obl":
                case = _case_of(object_head)
                if case and case[0].i == p_end and all(t.i == case[0].i + k for k, t in enumerate(case)):
                    joined_case = {t.i for t in case}
                    p_end = case[-1].i + 1
            tokens = s.cut_subtree(object_head, skip | joined_case) - joined_case
            objects.append((object_head.i, set(range(*_run(tokens, object_head.i, trim=s._trim_arg)))))
            for c in conjuncts:
                if c.i != object_head.i:
                    objects.append((c.i, _conjunct_tokens(s, c)))

    # the clause: own words of the head, less nested clauses and the subject it does not hold
    clause = set(range(p_start, p_end)) | pred_tokens
    if own_subject or (subj is not None and subj.dep_ == "expl"):
        clause |= subj_tokens
    outside = set() if own_subject else set(subj_tokens)
    if rel_object is not None:
        outside |= objects[0][1]
    for _, tokens in objects:
        clause |= tokens - outside
    for c in h.children:
        if c.i in s.boundary or c.i in outside:
            continue
        clause |= s.cut_subtree(c) - outside
    c_start, c_end = _run(clause, h.i, trim=s._trim_edge)
    # the clause covers its own subject, predicate and objects even when a nested clause lies between them
    parts = [(p_start, p_end)] + [(min(t), max(t) + 1) for _, t in objects if t and not t & outside]
    if own_subject and subj_tokens:
        parts.append((min(subj_tokens), max(subj_tokens) + 1))
    c_start = min([c_start] + [a for a, _ in parts])
    c_end = max([c_end] + [b for _, b in parts])

    subject_span = _span(doc, min(subj_tokens), max(subj_tokens) + 1) if subj_tokens else None
    base = dict(sentence=s.index, subject=subject_span, predicate=_span(doc, p_start, p_end),
                clause=_span(doc, c_start, c_end), negated=s.negated(h), head=h.i)
    if not objects:
        return [Triple(object=None, **base)]
    return [Triple(object=_span(doc, min(t), max(t) + 1) if t else None, **base) for _, t in objects]


def _conjunct_tokens(s: _Sentence, c: Token) -> set[int]:
    """A conjoined object without its conjunction and commas (``", and bread"`` -> ``bread``)."""
    skip = {k.i for k in c.children if k.dep_ in {"cc", "punct", "preconj"} and k.i < c.i}
    tokens = s.cut_subtree(c, skip) - skip
    return set(range(*_run(tokens, c.i, trim=s._trim_arg)))


def _verb_object(s: _Sentence, h: Token, own_subject: bool) -> tuple[Token | None, Token | None]:
    """(object head, relative antecedent standing for the object) of a verbal clause."""
    children = list(h.children)
    by = {}
    for c in children:
        by.setdefault(_base(c.dep_), c)
    obj = by.get("obj")
    relative = h.dep_ == "acl:relcl"
    if obj is not None:
        if relative and own_subject and obj.lower_ in _RELATIVE_PRONOUNS:
            return None, h.head
        return obj, None
    for dep in ("xcomp", "ccomp"):
        if dep in by:
            return by[dep], None
    for c in children:
        if _base(c.dep_) == "obl" and c.i > h.i and (_case_of(c) or c.dep_ == "obl:agent"):
            return c, None
    if relative and own_subject:
        return None, h.head
    return None, None


def _fragment(s: _Sentence, h: Token) -> list[Triple]:
    doc, sent = s.doc, s.sent
    if len(s.heads) == 1:
        clause = _span(doc, sent.start, sent.end)
    else:
        a, b = _run(s.cut_subtree(h), h.i, trim=s._trim_edge)
        clause = _span(doc, a, b)
    return [Triple(sentence=s.index, subject=None, predicate=_span(doc, h.i, h.i + 1), object=None,
                   clause=clause, negated=any(_is_negator(c) for c in h.children), head=h.i)]


def extract_triples(doc: Doc) -> list[Triple]:
    """The triples of a parsed Doc, sentence by sentence in text order (by predicate position). Every
    sentence yields at least one triple. Raises ValueError for a Doc without a dependency parse."""
    if len(doc) == 0:
        return []
    if not doc.has_annotation("DEP"):
        raise ValueError("extract_triples needs a Doc with a dependency parse (a pipeline with a parser)")
    out: list[Triple] = []
    for index, sent in enumerate(doc.sents):
        s = _Sentence(doc, sent, index)
        triples: list[Triple] = []
        for h in s.heads:
            triples.extend(_clause_triples(s, h))
        if not triples:   # a sentence whose root is outside it (should not happen): the root as fragment
            triples = _fragment(s, sent.root)
        triples.sort(key=lambda t: (t.predicate.start, t.object.start if t.object else -1))
        out.extend(triples)
    return out


def text_triples(texts: Sequence[str], nlp: Language | None = None, batch_size: int = 64) -> list[list[Triple]]:
    """Parse ``texts`` (with the bundled pipeline when ``nlp`` is None) and extract the triples of each."""
    from cfaug.nlp.pipeline import parse

    return [extract_triples(doc) for doc in parse(texts, nlp, batch_size=batch_size)]


def describe_triple(t: Triple) -> dict[str, Any]:
    """A JSON-ready description: each part's text, token span ``[start, end)`` and character span."""
    def part(span: Span | None) -> dict[str, Any] | None:
        if span is None:
            return None
        return {"text": span.text, "span": [span.start, span.end], "chars": [span.start_char, span.end_char]}

    return {"sentence": t.sentence, "subject": part(t.subject), "predicate": part(t.predicate),
            "object": part(t.object), "clause": part(t.clause), "negated": t.negated, "head": t.head}
