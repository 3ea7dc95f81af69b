"""Syntactic templates: a sentence's dependency tree written in prefix notation over relation labels.

A node is its relation label, followed by its children's templates in brackets, in word order::

    The food was great but the service slow .
    -> root [ nsubj [ det ] cop conj [ cc nsubj [ det ] ] punct ]

(relations as the parser names them: Universal Dependencies for the bundled ``en_ewt`` pipeline; the root
is written ``root``). Templates condition a generator on the *shape* of a sentence while a label supplies
its content. Two prunings are available: the tokens of ``exclude`` (e.g. a triplet's own terms) are removed
and their children take their place under the removed token's parent (a root is never removed), and
``max_depth`` cuts subtrees below that depth (0 = keep all). A sentence the parser splits into several
trees gives their templates one after another.

Sentences are parsed as given tokens (ASTE data is pre-tokenized), so a template's tokens line up with the
label's token indices.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

OPEN, CLOSE = "[", "]"


def parse_tokens(sentences: Iterable[Sequence[str]], nlp: Language | None = None, *,
                 batch_size: int = 256) -> Iterable[Doc]:
    """Parse pre-tokenized sentences (one token list each) without re-tokenizing them."""
    from spacy.tokens import Doc

    from cfaug.nlp.pipeline import load_pipeline

    nlp = nlp if nlp is not None else load_pipeline(exclude=("lemmatizer",))
    docs = (Doc(nlp.vocab, words=list(tokens) or [""]) for tokens in sentences)
    yield from nlp.pipe(docs, batch_size=batch_size)


def _kept_children(token: Any, exclude: set[int]) -> list[Any]:
    """The children of ``token`` in the pruned tree: an excluded child is replaced by its own kept
    children, recursively, in word order."""
    out: list[Any] = []
    for child in token.children:
        if child.i in exclude:
            out.extend(_kept_children(child, exclude))
        else:
            out.append(child)
    return sorted(out, key=lambda t: t.i)


def _node(token: Any, exclude: set[int], depth: int, max_depth: int) -> list[str]:
    label = "root" if token.dep_ == "ROOT" or token.head.i == token.i else token.dep_.lower()
    parts = [label or "dep"]
    children = _kept_children(token, exclude)
    if children and (max_depth <= 0 or depth < max_depth):
        parts.append(OPEN)
        for child in children:
            parts += _node(child, exclude, depth + 1, max_depth)
        parts.append(CLOSE)
    return parts


def template_tokens(doc: Doc, exclude: Iterable[int] = (), max_depth: int = 0) -> list[str]:
    """The template of ``doc`` as a list of symbols (relation labels and brackets); see the module
    docstring."""
    roots = [t for t in doc if t.head.i == t.i or t.dep_ == "ROOT"]
    excl = set(exclude) - {t.i for t in roots}
    out: list[str] = []
    for token in roots:
        out += _node(token, excl, 1, max_depth)
    return out


def dependency_template(doc: Doc, exclude: Iterable[int] = (), max_depth: int = 0) -> str:
    """:func:`template_tokens` joined by spaces."""
    return " ".join(template_tokens(doc, exclude, max_depth))


def template_size(template: str) -> int:
    """The number of nodes (relation labels) of a template: the words it asks for besides pruned ones."""
    return sum(1 for s in template.split() if s not in (OPEN, CLOSE))


def check_template(template: str) -> str | None:
    """Why ``template`` is not a well-formed prefix tree (unbalanced or empty brackets), or None."""
    depth, prev = 0, None
    for sym in template.split():
        if sym == OPEN:
            if prev in (None, OPEN, CLOSE):
                return "an opening bracket must follow a relation label"
            depth += 1
        elif sym == CLOSE:
            if prev == OPEN:
                return "empty brackets"
            depth -= 1
            if depth < 0:
                return "a closing bracket without its opening one"
        prev = sym
    if depth:
        return "an opening bracket is never closed"
    if template_size(template) == 0:
        return "no relation labels"
    return None
