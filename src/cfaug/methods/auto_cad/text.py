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
    """Apply non-overlapping edits; deletions also take one adjacent space and tidy punctuation."""
    out, pos = [], 0
    for ed in sorted(edits, key=lambda e: e.start):
        if ed.start < pos:
            continue  # overlapping edit: keep the first
        start, end, new = ed.start, ed.end, ed.new
        if new == "":
            nxt = end
            while nxt < len(text) and text[nxt] in " ,;:-":
                nxt += 1
            if (ed.old[:1].isupper() and _starts_sentence(text, start) and nxt < len(text)
                    and text[nxt].islower()):
                # a deleted sentence-initial word hands its capital to the next word; an orphaned
                # comma between them goes too ("Stupid, dull and ugly." -> "Dull and ugly.")
                end, new = nxt + 1, text[nxt].upper()
            elif end < len(text) and text[end] == " " and (start == 0 or text[start - 1] in " \n\"'(["):
                end += 1
            elif start > 0 and text[start - 1] == " ":
                start -= 1
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return _tidy("".join(out))


def _starts_sentence(text: str, i: int) -> bool:
    """Whether position ``i`` opens a sentence (text start, or after . ! ? or an HTML break)."""
    before = text[:i].rstrip().rstrip("\"'([").rstrip()
    return not before or before[-1] in ".!?>"


_TIDY = [(re.compile(r" +([,.;:!?])"), r"\1"), (re.compile(r",\s*,"), ","), (re.compile(r"(^|[.!?]\s+),\s*"), r"\1"),
         (re.compile(r"  +"), " ")]


def _tidy(text: str) -> str:
    for pat, rep in _TIDY:
        text = pat.sub(rep, text)
    return text


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
