"""Delexicalised generation: the generator writes placeholders where the label's terms go, and the terms are
put back after decoding.

A small generator trained from scratch on a few thousand sentences learns the words around aspect and
opinion terms well but copies rare terms ("battery life", "keyboard") badly: most of its sentences then
lack a term of their label and fail. With delexicalisation the condition

    ``battery life | great | positive ; root [ nsubj [ compound ] cop amod ]``

becomes ``<a0> | <o0> | positive ; root [ ...`` and the training sentence "the battery life is great"
becomes "the <a0> is <o0>"; after decoding, each placeholder is replaced by its term. A term that occurs in
several triplets keeps one placeholder; a placeholder the condition does not define is dropped.

>>> cond, terms = delexicalise_condition("battery life | great | positive ; root [ nsubj ]")
>>> cond
'<a0> | <o0> | positive ; root [ nsubj ]'
>>> delexicalise_sentence("the battery life is great .", terms)
'the <a0> is <o0> .'
>>> fill("the <a0> is <o0> , <o0> !", terms)
'the battery life is great , great !'
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: placeholders per role; a label with more distinct terms keeps the rest as words
MAX_TERMS = 10
PLACEHOLDERS = tuple(f"<{role}{k}>" for role in "ao" for k in range(MAX_TERMS))
_PLACEHOLDER = re.compile(r"^<[ao]\d+>$")
SEPARATOR = " ; "


def split_condition(condition: str) -> tuple[list[list[str]], str]:
    """The triplets (``[aspect, opinion, polarity]``) and the template of a generator condition
    (``a | o | p ; a | o | p ; template``)."""
    parts = condition.split(SEPARATOR)
    template = parts[-1] if len(parts) > 1 else ""
    triplets = [[x.strip() for x in p.split("|")] for p in (parts[:-1] if len(parts) > 1 else parts)]
    return [t for t in triplets if len(t) == 3], template


def delexicalise_condition(condition: str) -> tuple[str, dict[str, str]]:
    """The condition with each distinct aspect and opinion term replaced by a placeholder, and the
    placeholder -> term map. A condition that does not parse as triplets + template is returned as it is."""
    triplets, template = split_condition(condition)
    if not triplets:
        return condition, {}
    terms: dict[str, str] = {}
    by_term: dict[str, str] = {}
    counts = {"a": 0, "o": 0}
    parts = []
    for aspect, opinion, polarity in triplets:
        shown = []
        for role, term in (("a", aspect), ("o", opinion)):
            if term in by_term:
                shown.append(by_term[term])
            elif term and counts[role] < MAX_TERMS:
                slot = f"<{role}{counts[role]}>"
                counts[role] += 1
                by_term[term] = slot
                terms[slot] = term
                shown.append(slot)
            else:
                shown.append(term)
        parts.append(f"{shown[0]} | {shown[1]} | {polarity}")
    return SEPARATOR.join(parts + [template]), terms


def delexicalise_sentence(sentence: str, terms: Mapping[str, str]) -> str:
    """``sentence`` (space-separated tokens) with every occurrence of a term replaced by its placeholder,
    longer terms first."""
    tokens = sentence.split()
    for slot, term in sorted(terms.items(), key=lambda kv: -len(kv[1].split())):
        words = term.split()
        n = len(words)
        if not n:
            continue
        out, i = [], 0
        while i < len(tokens):
            if [t.lower() for t in tokens[i:i + n]] == [w.lower() for w in words]:
                out.append(slot)
                i += n
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
    return " ".join(tokens)


def fill(sentence: str, terms: Mapping[str, str]) -> str:
    """Placeholders replaced by their terms; placeholders ``terms`` does not define are dropped."""
    out = []
    for tok in sentence.split():
        if _PLACEHOLDER.match(tok):
            if tok in terms:
                out.append(terms[tok])
        else:
            out.append(tok)
    return " ".join(out)
