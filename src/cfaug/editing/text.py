"""Tokens with character spans, sentence boundaries and span edits that keep the original formatting."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cfaug.nlp.inflect import indefinite_article, match_case

__all__ = ["Edit", "Token", "apply_edits", "match_case", "sentence_spans", "tokenize"]

_WORD = re.compile(r"[A-Za-z0-9]+(?:[-'][A-Za-z0-9]+)*|n't|[^\sA-Za-z0-9]")
_SENT_END = re.compile(r"(?<=[.!?])(?P<close>[\"')\]]*)\s+|<br\s*/?>\s*(?:<br\s*/?>\s*)*", re.IGNORECASE)


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int
    sentence: int

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def is_word(self) -> bool:
        return self.text[0].isalnum()


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of sentences (split after . ! ? and at HTML line breaks). Closing quotes and
    brackets after the final punctuation belong to the sentence."""
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        end = m.start() + len(m.group("close") or "")
        if end > start:
            spans.append((start, end))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans or [(0, len(text))]


def sentence_members(tokens: Sequence[Token]) -> dict[int, list[int]]:
    """Token indices of each sentence, by sentence number."""
    members: dict[int, list[int]] = {}
    for j, t in enumerate(tokens):
        members.setdefault(t.sentence, []).append(j)
    return members


def tokenize(text: str) -> list[Token]:
    """Word and punctuation tokens with spans; ``don't`` becomes ``do`` + ``n't``."""
    tokens: list[Token] = []
    for si, (s, e) in enumerate(sentence_spans(text)):
        for m in _WORD.finditer(text, s, e):
            word = m.group()
            low = word.lower()
            if low.endswith("n't") and len(word) > 3:
                cut = m.end() - 3
                tokens.append(Token(text[m.start():cut], m.start(), cut, si))
                tokens.append(Token(text[cut:m.end()], cut, m.end(), si))
            else:
                tokens.append(Token(word, m.start(), m.end(), si))
    return tokens


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` by ``new`` (empty = delete)."""

    start: int
    end: int
    new: str
    old: str
    kind: str  # "remove" | "replace" | "negation" (a negator removed) | "negation-insert" | "phrase" (mined)

    def to_json(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "old": self.old, "new": self.new, "kind": self.kind}


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (an overlapping one is skipped: the first wins). Every character outside
    the edited spans is kept as it was; a deletion also tidies its own junction only (one space between the
    words it leaves side by side, no space before a following punctuation mark unless the text had one
    there, no doubled or sentence-initial comma), so the rest of the text keeps its spacing, case and markup.
    """
    out, pos = "", 0
    for ed in sorted(edits, key=lambda e: e.start):
        if ed.start < pos:
            continue  # overlapping edit: keep the first
        out += text[pos:ed.start]
        if ed.new:
            out += ed.new
            pos = ed.end
        else:
            out, pos = _join_deletion(out, text, ed)
    return out + text[pos:]


_SPACE = " \t"
_SEPARATORS = ",;:"
_CLOSERS = ",.;:!?)]}<\r\n"  # "<": an HTML tag such as <br />
_OPENERS = "([{\"'\n"


def _join_deletion(left: str, text: str, ed: Edit) -> tuple[str, int]:
    """Join ``left`` (the output up to the deleted span) to ``text`` after it; returns the new output and the
    position in ``text`` to go on from. Only the whitespace and punctuation touching the deletion change."""
    end = ed.end
    body = left.rstrip(_SPACE)
    k = end
    while k < len(text) and text[k] in _SPACE:
        k += 1
    nxt = text[k:k + 1]
    at_start = _starts_sentence(text, ed.start)
    if at_start and ed.old[:1].isupper():
        # a deleted sentence-initial word hands its capital to the next word; an orphaned separator
        # between them goes too ("Stupid, dull and ugly." -> "Dull and ugly.")
        j = k + 1 if nxt and nxt in _SEPARATORS else k
        while j < len(text) and text[j] in _SPACE:
            j += 1
        if j < len(text) and text[j].islower():
            return left + text[j].upper(), j + 1
    doubled = bool(body) and body[-1] in _SEPARATORS
    if nxt and nxt in _SEPARATORS and (at_start or doubled):
        if doubled:  # "good, bad, and" -> "good, and": the separator before goes
            return body[:-1].rstrip(_SPACE), end
        j = k + 1  # a sentence-initial separator goes with the word it followed
        while j < len(text) and text[j] in _SPACE:
            j += 1
        return left, j
    if not nxt or nxt in _CLOSERS:
        return body, end  # the spacing the text had before the punctuation mark, line break or end
    if not body or body[-1] in _OPENERS or body != left:
        return left, k  # the space already in the output is the one between the words
    return left, end


def _starts_sentence(text: str, i: int) -> bool:
    """Whether position ``i`` opens a sentence (text start, or after . ! ? or an HTML break)."""
    before = text[:i].rstrip().rstrip("\"'([").rstrip()
    return not before or before[-1] in ".!?>"


def agree_article(text: str, tokens: Sequence[Token], i: int, edit: Edit) -> Edit:
    """``edit`` of ``tokens[i]``, widened to rewrite the indefinite article before it when the word that
    now follows the article needs the other one ("a great film" -> "an awful film"; removing "excellent"
    from "an excellent film" -> "a film")."""
    if i == 0 or tokens[i - 1].lower not in ("a", "an") or tokens[i - 1].sentence != tokens[i].sentence:
        return edit
    art = tokens[i - 1]
    if edit.new.strip():
        following = edit.new.split()[0]
    elif i + 1 < len(tokens) and tokens[i + 1].sentence == tokens[i].sentence and tokens[i + 1].is_word:
        following = tokens[i + 1].text
    else:
        return edit
    want = indefinite_article(following)
    if want == art.lower:
        return edit
    article = match_case(art.text, want)
    if edit.new.strip():
        new = article + text[art.end:edit.start] + edit.new
    else:  # removal: the article stays, in the form the next word needs
        new = article
    return Edit(art.start, edit.end, new, text[art.start:edit.end], edit.kind)
