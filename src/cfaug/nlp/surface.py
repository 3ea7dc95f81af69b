"""A rewrite in its source's surface form: the same case and the same tokenization.

Sentiment corpora are often lower-cased and tokenized ("it 's located in a great part of town .", "do n't
go here"). A language model answers in ordinary prose ("It's located in a great part of town."). Written
under the flipped label, such a row differs from its original in case and spacing as well as in its label:
a cue a classifier learns instead of the sentiment. :func:`in_surface_of` gives the rewrite the source's
form:

* **case**: a source with no upper-case letter gets a lower-cased rewrite; otherwise the rewrite's own case
  stays (a proper sentence has its capitals), with a capital first letter where the source has one;
* **tokenization**: a tokenized source (punctuation and clitics set off by spaces: "great !", "is n't",
  "it 's") gets the rewrite tokenized the same way; a source written as prose gets the spaces before
  punctuation and clitics of a tokenized rewrite closed up;
* **the end**: a source without a final full stop gets none.

A rewrite already in its source's form is returned as it is. The words themselves are never changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Surface", "in_surface_of", "surface_of"]

_CLITICS = r"n't|'s|'re|'ve|'ll|'d|'m"
#: a clitic written against its word ("don't", "it's")
_JOINED_CLITIC = re.compile(rf"(?<=[A-Za-z])({_CLITICS})\b", re.IGNORECASE)
#: a clitic set off by a space ("do n't", "it 's")
_SPLIT_CLITIC = re.compile(rf"(?<=\w) ({_CLITICS})\b", re.IGNORECASE)
#: punctuation written against the word before it ("great!", "town.")
_JOINED_PUNCT = re.compile(r"(?<=[\w)\"'])([.,!?;:]+)(?=\s|$)")
#: punctuation set off by a space ("great !", "town .")
_SPLIT_PUNCT = re.compile(r"(?<=\w) ([.,!?;:]+)(?=\s|$)")
_SPACES = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class Surface:
    """How a text is written: ``lower`` (no upper-case letter), ``tokenized`` (punctuation or clitics set
    off by spaces, none written against a word), or neither known (``tokenized`` None: the text has no
    punctuation or clitic to tell)."""

    lower: bool
    tokenized: bool | None


def surface_of(text: str) -> Surface:
    """The surface form of ``text`` (see :class:`Surface`)."""
    letters = [c for c in text if c.isalpha()]
    lower = bool(letters) and not any(c.isupper() for c in letters)
    split = len(_SPLIT_CLITIC.findall(text)) + len(_SPLIT_PUNCT.findall(text))
    joined = len(_JOINED_CLITIC.findall(text)) + len(_JOINED_PUNCT.findall(text))
    tokenized = None if not split and not joined else split > joined
    return Surface(lower, tokenized)


def in_surface_of(source: str, rewrite: str) -> str:
    """``rewrite`` written in ``source``'s case and tokenization (see the module docstring)."""
    want, have = surface_of(source), surface_of(rewrite)
    out = rewrite
    if want.tokenized is True and have.tokenized is False:
        out = _JOINED_CLITIC.sub(r" \1", out)
        out = _JOINED_PUNCT.sub(r" \1", out)
        out = _SPACES.sub(" ", out)
    elif want.tokenized is False and have.tokenized is True:
        out = _SPLIT_CLITIC.sub(r"\1", out)
        out = _SPLIT_PUNCT.sub(r"\1", out)
    if want.lower and not have.lower:
        out = out.lower()
    elif not want.lower:
        out = _first_letter_like(source, out)
    if not source.rstrip().endswith((".", "!", "?", "\"", "'", ")")) and out.rstrip().endswith(".") \
            and not out.rstrip().endswith(".."):
        out = out.rstrip()[:-1].rstrip()  # no full stop the source does not have
    return out


def _first_letter_like(source: str, rewrite: str) -> str:
    """``rewrite`` with its first letter upper-cased when ``source``'s is (a sentence starts with a capital)."""
    first = next((c for c in source if c.isalpha()), "")
    at = next((i for i, c in enumerate(rewrite) if c.isalpha()), None)
    if first.isupper() and at is not None and rewrite[at].islower():
        return rewrite[:at] + rewrite[at].upper() + rewrite[at + 1:]
    return rewrite
