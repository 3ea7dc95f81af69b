"""Output parsers: read a revised text, a label or a list of triples out of an LLM answer.

A parser is called as ``parser(answer, **context)`` and returns the value or raises
:class:`~cfaug.llm.errors.ParseError` with a reason; ``parser.reminder(**context)`` is the instruction
sent back to the model when its answer did not parse. Parsers are registered by versioned name and
referred to from a template's ``parser:`` header.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cfaug.llm.errors import ParseError
from cfaug.registry import Registry


class Parser:
    """Base class: subclasses implement ``__call__`` and may refine ``reminder``."""

    name = "parser"

    def __call__(self, answer: str, **context: Any) -> Any:
        raise NotImplementedError

    def reminder(self, **context: Any) -> str:
        return "Answer again, following the requested format exactly."


PARSERS: Registry[Parser] = Registry("parser")

_QUOTES = "\"'\u201c\u201d\u2018\u2019`"
_CHATTER = re.compile(
    r"^\s*(sure\b|certainly\b|of course\b|here\s+is\b|here's\b|here are\b|okay\b|ok\b|i\s|i'm\b|i am\b|as an ai\b|"
    r"the revised\b|revised\b|this revision\b|below is\b|note\b)", re.I)


def clean_text(text: str) -> str:
    """Strip whitespace, markdown emphasis and one layer of matching quotes."""
    text = text.strip()
    for wrap in ("**", "__", "*"):
        if len(text) > 2 * len(wrap) and text.startswith(wrap) and text.endswith(wrap):
            text = text[len(wrap):-len(wrap)].strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES and text.count(text[0]) <= 2:
        text = text[1:-1].strip()
    return text


class RevisedText(Parser):
    """A rewritten text. Looks, in order, for ``<tag>...</tag>`` (``tag`` from context, default
    ``revised``; the last complete pair wins, an unclosed tag takes the rest), a ``Revised ...:`` label,
    a fully bracketed answer ``[...]``, and finally the whole answer when it is not chatter."""

    name = "revised_text"

    def __call__(self, answer: str, *, tag: str = "revised", **context: Any) -> str:
        text = (answer or "").strip()
        if not text:
            raise ParseError("the answer is empty")
        open_t, close_t = f"<{tag}>", f"</{tag}>"
        pairs = re.findall(re.escape(open_t) + r"(.*?)" + re.escape(close_t), text, re.S | re.I)
        pairs = [p for p in pairs if p.strip() and p.strip().lower() not in ("and", "...", "text")]
        if pairs:
            return self._nonempty(clean_text(pairs[-1]))
        lower = text.lower()
        last_open = lower.rfind(open_t)
        if last_open >= 0:
            tail = text[last_open + len(open_t):]
            if close_t not in tail.lower():  # opened, never closed: cut off by max_tokens, or forgotten
                return self._nonempty(clean_text(tail))
            raise ParseError(f"the revised text between <{tag}> and </{tag}> is empty")
        m = re.search(r"(?im)^[ \t>*_]*(?:new |final )?revised(?: [a-z]+){0,2}[ \t*_]*:[ \t*_]*(.*)$", text)
        if m:
            rest = (m.group(1) + text[m.end():]).strip()
            paragraph = re.split(r"\n\s*\n", rest, maxsplit=1)[0] if rest else ""
            return self._nonempty(clean_text(paragraph))
        if text.startswith("[") and text.endswith("]") and text.count("[") == 1:
            return self._nonempty(clean_text(text[1:-1]))
        if _CHATTER.match(text):
            raise ParseError(f"no <{tag}> tags and the answer reads like commentary: {text[:80]!r}")
        return self._nonempty(clean_text(text))

    @staticmethod
    def _nonempty(text: str) -> str:
        if not text:
            raise ParseError("the revised text is empty")
        return text

    def reminder(self, *, tag: str = "revised", **context: Any) -> str:
        return (f"I could not find the revised text in your answer. Reply with the revised text only, "
                f"between <{tag}> and </{tag}>.")


class Label(Parser):
    """One label out of ``labels`` (context). Accepts ``<label>x</label>``, an answer that is just a
    label, or an answer mentioning exactly one label (as a whole word); ``aliases`` (context, alias ->
    label) add spellings such as ``pos``. Two different labels mentioned is an error, not a guess."""

    name = "label"

    def __call__(self, answer: str, *, labels: Sequence[str] = (), aliases: Mapping[str, str] | None = None,
                 **context: Any) -> str:
        if not labels:
            raise ValueError("the label parser needs labels=[...] in its context")
        names = {lab.lower(): lab for lab in labels}
        for alias, lab in (aliases or {}).items():
            if lab in labels:
                names.setdefault(alias.lower(), lab)
        text = (answer or "").strip()
        m = re.search(r"<label>(.*?)</label>", text, re.S | re.I)
        if m:
            text = m.group(1).strip()
        bare = clean_text(text).strip(" .!:;").lower()
        if bare in names:
            return names[bare]
        found = []
        for word in sorted(names, key=len, reverse=True):
            if re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text, re.I):
                if names[word] not in found:
                    found.append(names[word])
        if len(found) == 1:
            return found[0]
        if not found:
            raise ParseError(f"no label among {', '.join(labels)} in the answer: {text[:80]!r}")
        raise ParseError(f"the answer names several labels ({', '.join(found)})")

    def reminder(self, *, labels: Sequence[str] = (), **context: Any) -> str:
        return f"Answer with exactly one of: {', '.join(labels)}."


_POLARITY = {"pos": "positive", "positive": "positive", "neg": "negative", "negative": "negative",
             "neu": "neutral", "neutral": "neutral"}


class Triples(Parser):
    """A list of ``(aspect, opinion, sentiment)`` triples, from JSON (lists or objects with those keys),
    Python-style tuples, or ``(a, b, c)`` lines. Sentiment spellings POS/NEG/NEU are normalised to
    positive/negative/neutral. ``[]`` is a valid answer (no triples)."""

    name = "triples"
    keys = ("aspect", "opinion", "sentiment")

    def __call__(self, answer: str, **context: Any) -> list[tuple[str, str, str]]:
        text = (answer or "").strip()
        block = re.search(r"```(?:json|python)?\s*(.*?)```", text, re.S)
        if block:
            text = block.group(1).strip()
        start, end = text.find("["), text.rfind("]")
        if start >= 0 and end > start:
            chunk = text[start:end + 1]
            for load in (json.loads, ast.literal_eval):
                try:
                    data = load(chunk)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                if isinstance(data, list):
                    return [self._triple(item) for item in data]
        groups = re.findall(r"\(([^()]*)\)", text)
        if groups:
            out = []
            for g in groups:
                parts = [clean_text(p) for p in g.split(",")]
                if len(parts) != 3:
                    raise ParseError(f"a triple needs 3 parts, got {len(parts)}: ({g})")
                out.append(self._triple(parts))
            return out
        raise ParseError(f"no list of triples in the answer: {text[:80]!r}")

    def _triple(self, item: Any) -> tuple[str, str, str]:
        if isinstance(item, Mapping):
            try:
                item = [item[k] for k in self.keys]
            except KeyError:
                raise ParseError(f"a triple object needs keys {', '.join(self.keys)}: {item}") from None
        if not isinstance(item, (list, tuple)) or len(item) != 3:
            raise ParseError(f"a triple needs 3 parts: {item!r}")
        aspect, opinion, sentiment = (clean_text(str(x)) for x in item)
        polarity = _POLARITY.get(sentiment.lower())
        if polarity is None:
            raise ParseError(f"unknown sentiment {sentiment!r} (expected positive, negative or neutral)")
        if not aspect or not opinion:
            raise ParseError(f"empty aspect or opinion in {item!r}")
        return aspect, opinion, polarity

    def reminder(self, **context: Any) -> str:
        return ('Answer with a JSON list of triples only, e.g. [["service", "slow", "negative"]], '
                "or [] if there are none.")


class Text(Parser):
    """The whole answer, stripped; fails only when it is empty."""

    name = "text"

    def __call__(self, answer: str, **context: Any) -> str:
        text = (answer or "").strip()
        if not text:
            raise ParseError("the answer is empty")
        return text


_NUMBER = r"[-+]?\d+(?:\.\d+)?"


def one_number(answer: str, tag: str, patterns: Sequence[str] = ()) -> str:
    """The number an answer gives: inside ``<tag>...</tag>`` when present, the whole answer when it is just
    a number, the first match of one of ``patterns`` (regular expressions with the number as group 1), or
    the only number in the answer. Raises :class:`ParseError` when there is none or several."""
    text = (answer or "").strip()
    m = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.S | re.I)
    if m:
        text = m.group(1).strip()
    bare = clean_text(text).strip(" .!:;")
    if re.fullmatch(_NUMBER, bare):
        return bare
    for pattern in patterns:
        m = re.search(pattern, text, re.I)
        if m:
            return m.group(1)
    numbers = set(re.findall(_NUMBER, text))
    if len(numbers) == 1:
        return numbers.pop()
    if not numbers:
        raise ParseError(f"no number in the answer: {text[:80]!r}")
    raise ParseError(f"the answer holds several numbers ({', '.join(sorted(numbers))})")


class Score(Parser):
    """A number from ``low`` to ``high`` (context; default 1 to 5). Accepts ``<score>x</score>``, an answer
    that is just a number, ``x/5`` or ``x out of 5``, a number after the word ``score``, or an answer with
    exactly one number. A number outside the range is an error, not clipped."""

    name = "score"
    patterns = (rf"({_NUMBER})\s*(?:/|out of)\s*\d+", rf"score\w*\W{{0,3}}(?:is|of|=)?\W{{0,3}}({_NUMBER})")

    def __call__(self, answer: str, *, low: float = 1.0, high: float = 5.0, **context: Any) -> float:
        value = float(one_number(answer, "score", self.patterns))
        if not low <= value <= high:
            raise ParseError(f"the score {value:g} is outside {low:g} to {high:g}")
        return value

    def reminder(self, *, low: float = 1.0, high: float = 5.0, **context: Any) -> str:
        return f"Answer with one number from {low:g} to {high:g} only, between <score> and </score>."


class Count(Parser):
    """A natural number (0, 1, 2...): ``<count>n</count>``, an answer that is just the number, a number
    after ``count``, ``score`` or ``number``, or an answer with exactly one number. A negative or
    fractional number is an error."""

    name = "count"
    patterns = (rf"(?:count|score|number)\w*\W{{0,3}}(?:is|of|=)?\W{{0,3}}({_NUMBER})",)

    def __call__(self, answer: str, **context: Any) -> int:
        number = one_number(answer, "count", self.patterns)
        value = float(number)
        if value < 0 or not value.is_integer():
            raise ParseError(f"the count {number} is not a whole number of 0 or more")
        return int(value)

    def reminder(self, **context: Any) -> str:
        return "Answer with one whole number (0, 1, 2, ...) only, between <count> and </count>."


class SemanticTriples(Parser):
    """Numbered ``subject | predicate | object`` lines, grouped by ``sent1:`` / ``sent2:`` headers when the
    answer has them (NLI); one group otherwise. Numbering (``1.``, ``1-2.``, ``-``) and chatter lines
    without ``|`` are ignored; a line with two parts has an empty object, extra parts join the object."""

    name = "semantic_triples"

    def __call__(self, answer: str, *, groups: int = 1, **context: Any) -> list[list[tuple[str, str, str]]]:
        out: list[list[tuple[str, str, str]]] = []
        current: list[tuple[str, str, str]] | None = None
        for line in (answer or "").splitlines():
            head = re.match(r"^\s*(?:reconstructed\s+)?(?:sent(?:ence)?\s*(\d)|premise|hypothesis)\s*:\s*(.*)$", line, re.I)
            if head:
                current = []
                out.append(current)
                line = head.group(2)
            if "|" not in line:
                continue
            body = re.sub(r"^\s*(?:[-*\u2022]|\d+(?:-\d+)?[.)]|\(\d+\))\s*", "", line)
            parts = [clean_text(p) for p in body.split("|")]
            if len(parts) < 2 or not parts[0] or not parts[1]:
                continue
            triple = (parts[0], parts[1], " | ".join(parts[2:]).strip() if len(parts) > 2 else "")
            if current is None:
                current = []
                out.append(current)
            current.append(triple)
        out = [g for g in out if g]
        if not out:
            raise ParseError(f"no 'subject | predicate | object' lines in the answer: {(answer or '')[:80]!r}")
        if len(out) != groups:
            raise ParseError(f"expected triples for {groups} sentence(s), found {len(out)} group(s)")
        return out

    def reminder(self, *, groups: int = 1, **context: Any) -> str:
        if groups == 1:
            return "Answer with the triples only, one per line: subject | predicate | object"
        return ("Answer with the triples only, under the headers sent1: and sent2:, one per line: "
                "subject | predicate | object")


for _parser in (Text(), RevisedText(), Label(), Triples(), Score(), Count(), SemanticTriples()):
    PARSERS.register(f"{_parser.name}.v1", (type(_parser).__doc__ or "").strip().splitlines()[0])(_parser)


def get_parser(name: str) -> Parser:
    return PARSERS.get(name)
