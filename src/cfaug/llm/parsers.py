"""Output parsers: read a revised text, a label or a list of triples out of an LLM answer.

A parser is called as ``parser(answer, **context)`` and returns the value or raises
:class:`~cfaug.llm.errors.ParseError` with a reason; ``parser.reminder(**context)`` is the instruction
sent back to the model when its answer did not parse. Parsers are registered by versioned name and
referred to from a template's ``parser:`` header.

Every parser first removes a reasoning model's thinking (:func:`split_reasoning`: complete
``<think>...</think>`` or ``<thinking>...</thinking>`` blocks, and everything before a lone ``</think>``
whose opening tag was in the prompt); an answer left with an opened, never closed block is unreadable.
:meth:`Parser.read` also says how the value was found (``notes``) and takes ``truncated=True`` for an answer
cut off at ``max_tokens``: such an answer is read only where its value is complete (between closed tags).

A rewrite's own text may hold the very tags the answer is read by (a review with ``</revised>`` or ``</think>``
in it). The rewrite then carries them too, so :meth:`Parser.read` reads such an answer knowing the text's tags
(:func:`text_tags`): the answer's tags that copy the text's are read as part of the rewrite, and an answer
whose tags cannot be told apart that way is unreadable (:data:`~cfaug.llm.errors.TAGS_IN_TEXT`), never read
short.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from dataclasses import dataclass, field

from cfaug.llm.errors import (COMMENTARY, CUT_OFF, ECHO, EMPTY, NOT_A_REWRITE, REASONING_OPEN, TAGS_IN_TEXT,
                               ParseError)
from cfaug.nlp.tokens import has_form, word_sequence
from cfaug.registry import Registry

#: Tags of reasoning blocks written inline by reasoning models (DeepSeek-R1, Qwen3, QwQ... use ``think``).
REASONING_TAGS = ("think", "thinking")
_TAG_NAMES = "|".join(REASONING_TAGS)
_BLOCK = re.compile(rf"<({_TAG_NAMES})>(.*?)</\1>", re.S | re.I)
_CLOSE = re.compile(rf"</(?:{_TAG_NAMES})>", re.I)
_OPEN = re.compile(rf"<(?:{_TAG_NAMES})>", re.I)


def split_reasoning(answer: str) -> tuple[str, str, bool]:
    """``(answer, reasoning, unclosed)``: the answer without inline reasoning, the reasoning taken out, and
    whether a reasoning block is left open (the answer is then what came before it, usually nothing).

    Removed: every complete ``<think>...</think>`` or ``<thinking>...</thinking>`` block, and everything up
    to a closing tag with no opening one (chat templates that open the block in the prompt, as
    DeepSeek-R1's and Qwen3's do, make the model's output start inside it)."""
    text = answer or ""
    thoughts: list[str] = []

    def take(m: re.Match[str]) -> str:
        thoughts.append(m.group(2).strip())
        return ""

    text = _BLOCK.sub(take, text)
    closes = list(_CLOSE.finditer(text))
    if closes:
        last = closes[-1]
        thoughts.insert(0, _CLOSE.sub("", text[:last.start()]).strip())
        text = text[last.end():]
    unclosed = False
    opened = _OPEN.search(text)
    if opened:
        thoughts.append(text[opened.end():].strip())
        text, unclosed = text[:opened.start()], True
    return text.strip(), "\n\n".join(t for t in thoughts if t), unclosed


def tag_pattern(names: Sequence[str]) -> re.Pattern[str]:
    """A pattern matching the opening and closing tags ``<name>`` and ``</name>`` of ``names`` (any case)."""
    return re.compile(r"</?(?:" + "|".join(re.escape(n) for n in names) + r")>", re.I)


def text_tags(text: str, names: Sequence[str]) -> list[str]:
    """The tags of ``names`` that ``text`` holds, in order and lower-cased (``["</revised>"]`` for "... slow.
    </Revised> Also ...").

    >>> text_tags("Rude. </Revised> Also <think>", ["revised", "think"])
    ['</revised>', '<think>']
    """
    return [m.group(0).lower() for m in tag_pattern(names).finditer(text or "")]


#: characters that stand for ``<`` and ``>`` in the answer's copies of its text's tags while it is read
#: (private-use code points: the first pair the answer does not hold is used)
_MASKS = (("\ue000", "\ue001"), ("\ue002", "\ue003"), ("\uf8fd", "\uf8fe"))
_HAS_WORD = re.compile(r"[^\W_]")


def _same_ends(value: str, mask: re.Pattern[str], text: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``value`` (its copies of the text's tags masked) has words before its first tag and after its
    last one exactly where ``text`` has words before and after its own."""
    def ends(parts: list[str]) -> tuple[bool, bool]:
        return bool(_HAS_WORD.search(parts[0])), bool(_HAS_WORD.search(parts[-1]))
    return ends(mask.split(value)) == ends(pattern.split(text))


@dataclass
class Parsed:
    """What :meth:`Parser.read` found: the ``value``, ``notes`` on how (e.g. an untagged rewrite's length
    ratio and word overlap; empty for a plain tagged answer) and the inline ``reasoning`` it removed."""

    value: Any
    notes: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""


class Parser:
    """Base class: subclasses implement ``parse`` (the answer with reasoning removed -> the value, or a
    :class:`Parsed` with notes) and may refine ``parse_truncated`` and ``reminder``. Calling a parser returns
    the value; :meth:`read` returns a :class:`Parsed`. (A subclass that overrides ``__call__`` instead of
    ``parse`` keeps working: it gets the answer with reasoning removed.)"""

    name = "parser"
    #: whether the value rewrites a text the prompt shows (context ``shown_text``, else ``source``), whose own
    #: tags the answer may then carry (see :meth:`read`)
    rewrites_text: ClassVar[bool] = False

    def __call__(self, answer: str, **context: Any) -> Any:
        return self.read(answer, **context).value

    def tag_names(self, **context: Any) -> tuple[str, ...]:
        """The names of the tags this parser finds its value by, besides the reasoning tags (none here)."""
        return ()

    def text_tags(self, **context: Any) -> list[str]:
        """The tags the answer is read by (reasoning tags and :meth:`tag_names`) that the text being rewritten
        (context ``shown_text``, else ``source``) holds itself, in order; empty for a parser that does not
        rewrite a text (:attr:`rewrites_text`)."""
        if not self.rewrites_text:
            return []
        shown = context.get("shown_text") or context.get("source") or ""
        return text_tags(shown, (*REASONING_TAGS, *self.tag_names(**context))) if "<" in shown else []

    def parse(self, text: str, **context: Any) -> Any:
        raise NotImplementedError

    def parse_truncated(self, text: str, **context: Any) -> Any:
        """Read an answer cut off at ``max_tokens``: by default never (its value may be cut short)."""
        raise ParseError("the answer was cut off at max_tokens before it was complete", CUT_OFF)

    def read(self, answer: str, *, truncated: bool = False, **context: Any) -> Parsed:
        """Strip reasoning, then parse (``truncated``: the answer was cut off at ``max_tokens``).

        When the text being rewritten holds tags the answer is read by (:meth:`text_tags`), the answer is read
        knowing them: it is read once with none of its tags taken as the text's (when it holds each of the
        text's tags at most once: the rewrite may have dropped them), and once for each run of its tags that
        copies the text's, in order, with that run taken as part of the rewrite. A reading counts only when its
        value holds none of the answer's own tags and every copied tag, with words before and after them where
        the source has words. The longest reading is taken when it holds every other one; otherwise, or when
        none counts, the answer is unreadable (:data:`~cfaug.llm.errors.TAGS_IN_TEXT`)."""
        held = self.text_tags(**context)
        if held:
            return self._read_around_text_tags(answer or "", held, truncated, context)
        return self._read(answer, truncated, context)

    def _read_around_text_tags(self, answer: str, held: list[str], truncated: bool,
                               context: dict[str, Any]) -> Parsed:
        """:meth:`read` for an answer to a text that holds the tags ``held``."""
        pattern = tag_pattern((*REASONING_TAGS, *self.tag_names(**context)))
        hits = list(pattern.finditer(answer))
        found = [m.group(0).lower() for m in hits]
        runs: list[tuple[int, ...]] = []
        if all(found.count(t) <= 1 for t in set(held)):
            runs.append(())
        k = len(held)
        runs += [tuple(range(i, i + k)) for i in range(len(found) - k + 1) if found[i:i + k] == held]
        pair = next((p for p in _MASKS if p[0] not in answer and p[1] not in answer), None)
        if pair is None:
            runs = [r for r in runs if not r]
        errors: list[ParseError] = []
        readings: list[Parsed] = []
        for run in runs:
            masked = answer
            for j in reversed(run):
                m = hits[j]
                masked = masked[:m.start()] + pair[0] + m.group(0)[1:-1] + pair[1] + masked[m.end():]
            try:
                parsed = self._read(masked, truncated, context)
            except ParseError as exc:
                errors.append(exc)
                continue
            value = parsed.value
            if not isinstance(value, str):
                readings.append(parsed)
                continue
            if run:
                mask = re.compile(re.escape(pair[0]) + r"(/?[^\W\d_][\w-]*)" + re.escape(pair[1]))
                if len(mask.findall(value)) != k or pattern.search(value):
                    continue  # a copied tag left outside the value, or one of the answer's own inside it
                if not context.get("shown_text") and not _same_ends(value, mask, context.get("source") or "",
                                                                    pattern):
                    continue
                value = mask.sub(r"<\1>", value)
            elif pattern.search(value):
                continue
            readings.append(Parsed(value, parsed.notes, parsed.reasoning))
        if not readings and errors and len(errors) == len(runs):
            raise errors[0]
        if readings:
            best = max(readings, key=lambda r: len(str(r.value)))
            if all(str(r.value) in str(best.value) for r in readings):
                return best
        shown = ", ".join(dict.fromkeys(held))
        raise ParseError(f"the text holds {shown} itself, and the answer's own tags cannot be told from the ones "
                         "it copied from the text, so where the rewrite starts or ends is unknown", TAGS_IN_TEXT)

    def _read(self, answer: str, truncated: bool, context: dict[str, Any]) -> Parsed:
        """Strip reasoning, then parse (the plain :meth:`read`)."""
        text, reasoning, unclosed = split_reasoning(answer)
        if unclosed:
            if truncated:
                raise ParseError("the answer was cut off at max_tokens inside its reasoning (<think> never closed)",
                                 CUT_OFF)
            raise ParseError("the answer opens a reasoning block (<think>) and never closes it, so it holds no "
                             "answer", REASONING_OPEN)
        if truncated and not text:
            raise ParseError("the answer was cut off at max_tokens before any of it was written (a reasoning model "
                             "spent the budget thinking)" if reasoning else
                             "the answer was cut off at max_tokens before any of it was written", CUT_OFF)
        if truncated:
            value = self.parse_truncated(text, **context)
        elif type(self).__call__ is not Parser.__call__:  # an older parser that implements __call__
            value = self(text, **context)
        else:
            value = self.parse(text, **context)
        if isinstance(value, Parsed):
            return Parsed(value.value, value.notes, reasoning)
        return Parsed(value, {}, reasoning)

    def reminder(self, **context: Any) -> str:
        return "Answer again, following the requested format exactly."


def closed_tag(text: str, tag: str) -> str | None:
    """The content of the last complete ``<tag>...</tag>`` pair with something in it, or None."""
    pairs = re.findall(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", text, re.S | re.I)
    pairs = [p for p in pairs if p.strip()]
    return pairs[-1] if pairs else None


PARSERS: Registry[Parser] = Registry("parser")

#: Bounds within which an answer reads as a rewrite of its source (see :class:`RevisedText`): its length over
#: the source's (characters) and the share of the source's distinct words it keeps. They hold for every
#: rewrite, tagged or not.
UNTAGGED_LENGTH_RATIO = (0.5, 2.0)
UNTAGGED_MIN_OVERLAP = 0.5
#: a rewrite this close (rapidfuzz ratio of the word sequences, 0-100) to a line of the prompt that is not
#: itself a rewrite of the source is a copy of it (a demonstration's output, an instruction), not a rewrite
ECHO_SIMILARITY = 90.0
#: an answer whose words run unbroken through a prompt line for at least this many words echoes the prompt
ECHO_MIN_WORDS = 4

_QUOTES = "\"'\u201c\u201d\u2018\u2019`"
_CHATTER = re.compile(
    r"^\s*(sure\b|certainly\b|of course\b|here\s+is\b|here's\b|here are\b|okay\b|ok\b|i\s|i'm\b|i am\b|as an ai\b|"
    r"the revised\b|revised\b|this revision\b|below is\b|note\b)", re.I)
#: a line that starts the model's commentary on its own rewrite: a labelled note or explanation, or a
#: sentence about what "I" changed or what "this revision" does
_COMMENTARY_LINE = re.compile(
    r"^[\s>*_(\[-]*(?:"
    r"(?:notes?|explanation|explanations|changes?(?:\s+made)?|edits?(?:\s+made)?|reasoning|rationale|"
    r"justification|comments?|analysis|p\.?s\.?|summary of changes)\b[^:\n]{0,40}[:\-\u2013\u2014]"
    r"|(?:i|we)(?:'ve|\s+have)?\s+(?:changed|replaced|modified|edited|swapped|kept|removed|added|made|flipped|"
    r"rewrote|rewritten|turned|used|adjusted|reversed|altered|updated)\b"
    r"|(?:this|the|my)\s+(?:revision|rewrite|revised\s+\w+|change|changes|edit|edits|new\s+version|"
    r"modification|modified\s+\w+)\s+(?:is|was|changes|flips|keeps|makes|reverses|now|turns|uses|replaces|"
    r"shifts|conveys|expresses|has)\b"
    r"|(?:by|in\s+this\s+(?:revision|rewrite|version),?)\s+(?:changing|replacing|swapping|using|adding|removing)\b"
    r"|(?:let me know|hope this helps|feel free)\b)", re.I)
#: a closing parenthesis of commentary at the end of a one-line answer: "... (I changed 'great' to 'dull'.)"
_TRAILING_ASIDE = re.compile(r"\s*[(\[](?:note\b|i\s|i've\b|changed\b|replaced\b|swapped\b)[^()\[\]]*[)\]]\s*$", re.I)
_TAG_MARK = re.compile(r"</?[A-Za-z_][\w-]{0,30}>")
#: a prompt line's label ("Text:", "Revised sentence:", "1."), not part of what an answer could copy
_LINE_LABEL = re.compile(r"^\s*(?:[A-Za-z][\w ]{0,24}:|\d+[.)])\s+")


def _same_opening(answer: str, source: str | None) -> bool:
    """Whether ``answer`` and ``source`` start with the same word (case and surrounding punctuation ignored)."""
    if not source:
        return False
    first = [t.split()[0].strip(_QUOTES + ".,!?*_>-").casefold() if t.split() else "" for t in (answer, source)]
    return bool(first[0]) and first[0] == first[1]


def clean_text(text: str) -> str:
    """Strip whitespace, markdown emphasis and one layer of matching quotes."""
    text = text.strip()
    for wrap in ("**", "__", "*"):
        if len(text) > 2 * len(wrap) and text.startswith(wrap) and text.endswith(wrap):
            text = text[len(wrap):-len(wrap)].strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES and text.count(text[0]) <= 2:
        text = text[1:-1].strip()
    return text


def cut_commentary(text: str) -> tuple[str, bool]:
    """``(text, cut)``: ``text`` up to the first line, after its first, that reads as commentary on the
    rewrite (``Note: ...``, ``Explanation: ...``, ``I changed ...``, ``This revision ...``), without a
    trailing aside of that kind in parentheses; ``cut`` says whether anything was removed."""
    lines = text.split("\n")
    kept = lines
    for n, line in enumerate(lines[1:], 1):
        if _COMMENTARY_LINE.match(line):
            kept = lines[:n]
            break
    out = "\n".join(kept).rstrip()
    aside = _TRAILING_ASIDE.search(out)
    if aside and aside.start() > 0:
        out = out[:aside.start()].rstrip()
    return out, out != text.rstrip()


class RevisedText(Parser):
    """A rewritten text: the one answer reader every rewriting method shares.

    Where the rewrite is, in order: between ``<tag>`` and ``</tag>`` (``tag`` from context, default
    ``revised``; the last complete pair wins); after an unclosed opening tag; on the line after a
    ``Revised ...:`` label; inside a fully bracketed answer ``[...]``; or the whole answer when it does not
    open with chatter. Lines from the first one that reads as commentary (``Note:``, ``Explanation:``, ``I
    changed ...``) are cut, and so is a closing aside of that kind in parentheses.

    What is found is taken only when it plausibly rewrites ``source`` (context: the text being rewritten,
    when known), tagged or not: its length between ``min_length_ratio`` and ``max_length_ratio`` times the
    source's (characters; default 0.5 to 2) and at least ``min_word_overlap`` of the source's distinct words
    kept (default 0.5). And it must not copy the prompt (context ``prompt_text``): an answer whose words run
    through a prompt line for :data:`ECHO_MIN_WORDS` words or more, or within :data:`ECHO_SIMILARITY` of a
    line, is refused, unless that line itself rewrites the source (a previous draft the prompt shows).
    Notes record how an untagged rewrite was found and both figures, and any commentary cut. An answer cut
    off at ``max_tokens`` is read only from a complete tag pair."""

    name = "revised_text"
    rewrites_text = True

    def tag_names(self, *, tag: str = "revised", **context: Any) -> tuple[str, ...]:
        """The tag the rewrite stands between (context ``tag``, default ``revised``)."""
        return (tag,)

    def parse(self, text: str, *, tag: str = "revised", source: str | None = None,
              min_length_ratio: float = UNTAGGED_LENGTH_RATIO[0], max_length_ratio: float = UNTAGGED_LENGTH_RATIO[1],
              min_word_overlap: float = UNTAGGED_MIN_OVERLAP, prompt_text: str | None = None,
              **context: Any) -> Parsed:
        text = (text or "").strip()
        if not text:
            raise ParseError("the answer is empty", EMPTY)
        tagged = self._tagged(text, tag)
        if tagged is not None:
            how, found = "tags", tagged
        else:
            how, found = self._untagged(text, tag, source)
        found, cut = cut_commentary(clean_text(found))
        value = self._nonempty(clean_text(found))
        bounds = (min_length_ratio, max_length_ratio, min_word_overlap)
        notes = self._plausible(value, how, tag, source, *bounds)
        self._not_an_echo(value, source, prompt_text, bounds)
        if how == "tags":
            notes = {}
        if cut:
            notes["commentary_cut"] = True
        return Parsed(value, notes)

    def _untagged(self, text: str, tag: str, source: str | None = None) -> tuple[str, str]:
        """``(how, found)`` for an answer without a complete tag pair. An answer that opens like chatter
        ("I ...", "ok ...") is still a rewrite when its source opens with the same word ("i have been here
        twice ..." rewritten)."""
        open_t, close_t = f"<{tag}>", f"</{tag}>"
        lower = text.lower()
        last_open = lower.rfind(open_t)
        if last_open >= 0:
            tail = text[last_open + len(open_t):]
            if close_t in tail.lower():
                raise ParseError(f"the revised text between <{tag}> and </{tag}> is empty", EMPTY)
            return "unclosed tag", tail  # the closing tag forgotten (a cut-off answer never gets here)
        m = re.search(r"(?im)^[ \t>*_]*(?:(?:here is |here's )?(?:the |my )?)(?:new |final )?revised(?: [a-z]+){0,2}"
                      r"[ \t*_]*:[ \t*_]*(.*)$", text)
        if m:
            rest = (m.group(1) + text[m.end():]).strip()
            return "revised line", re.split(r"\n\s*\n", rest, maxsplit=1)[0] if rest else ""
        if text.startswith("[") and text.endswith("]") and text.count("[") == 1:
            return "brackets", text[1:-1]
        if _CHATTER.match(text) and not _same_opening(text, source):
            raise ParseError(f"no <{tag}> tags and the answer reads like commentary: {text[:80]!r}", COMMENTARY)
        return "untagged", text

    def parse_truncated(self, text: str, *, tag: str = "revised", source: str | None = None,
                        min_length_ratio: float = UNTAGGED_LENGTH_RATIO[0],
                        max_length_ratio: float = UNTAGGED_LENGTH_RATIO[1],
                        min_word_overlap: float = UNTAGGED_MIN_OVERLAP, prompt_text: str | None = None,
                        **context: Any) -> Parsed:
        tagged = self._tagged((text or "").strip(), tag)
        if tagged is None:
            raise ParseError(f"the answer was cut off at max_tokens before </{tag}>", CUT_OFF)
        value = self._nonempty(clean_text(cut_commentary(clean_text(tagged))[0]))
        bounds = (min_length_ratio, max_length_ratio, min_word_overlap)
        self._plausible(value, "tags", tag, source, *bounds)
        self._not_an_echo(value, source, prompt_text, bounds)
        return Parsed(value, {"cut_off_after_tags": True})

    @staticmethod
    def _tagged(text: str, tag: str) -> str | None:
        pairs = re.findall(re.escape(f"<{tag}>") + r"(.*?)" + re.escape(f"</{tag}>"), text, re.S | re.I)
        pairs = [p for p in pairs if p.strip() and p.strip().lower() not in ("and", "...", "text")]
        return pairs[-1] if pairs else None

    @staticmethod
    def _plausible(value: str, how: str, tag: str, source: str | None, low: float, high: float,
                   min_overlap: float) -> dict[str, Any]:
        """Notes on a rewrite, or a ParseError when it does not read as a rewrite of ``source``."""
        notes: dict[str, Any] = {"format": how}
        if source is None or not source.strip():
            return notes
        ratio, overlap = length_ratio(value, source), word_overlap(value, source)
        notes.update(length_ratio=round(ratio, 3), word_overlap=round(overlap, 3))
        if not low <= ratio <= high or overlap < min_overlap:
            where = "between its tags" if how == "tags" else f"no <{tag}> tags, and the answer ({how})"
            raise ParseError(
                f"{where} does not read as a rewrite of the text: {ratio:.2f} times its length (allowed {low:g} "
                f"to {high:g}), {overlap:.0%} of its words kept (at least {min_overlap:.0%} needed): "
                f"{value[:80]!r}", NOT_A_REWRITE)
        return notes

    @staticmethod
    def _not_an_echo(value: str, source: str | None, prompt_text: str | None,
                     bounds: tuple[float, float, float]) -> None:
        """Raise a ParseError when ``value`` copies a line of the prompt that is not a rewrite of ``source``."""
        if not prompt_text:
            return
        line = echoed_line(value, prompt_text, source, *bounds)
        if line is not None:
            raise ParseError(f"the answer copies the prompt instead of rewriting the text: {value[:80]!r} is "
                             f"taken from {line[:80]!r}", ECHO)

    @staticmethod
    def _nonempty(text: str) -> str:
        if not text:
            raise ParseError("the revised text is empty", EMPTY)
        return text

    def reminder(self, *, tag: str = "revised", **context: Any) -> str:
        """Ask for the rewrite between its tags again; when the text holds tags the answer is read by, say to
        keep them where they are inside the rewrite."""
        out = (f"I could not find the revised text in your answer. Reply with the revised text only, "
               f"between <{tag}> and </{tag}>.")
        held = self.text_tags(tag=tag, **context)
        if held:
            out += (f" The text itself holds {', '.join(dict.fromkeys(held))}: keep them where they are inside "
                    f"the revised text, and write no other <{tag}> or </{tag}>.")
        return out


_WORD = re.compile(r"\w+")


def length_ratio(text: str, source: str) -> float:
    """``text``'s length over ``source``'s, in characters (surrounding whitespace ignored)."""
    return len(text.strip()) / max(1, len(source.strip()))


def word_overlap(text: str, source: str) -> float:
    """The share of ``source``'s distinct words (lower-cased) that ``text`` keeps, a word counting as kept in
    another form of the same stem too ("sleeps", "sleeping"); 1.0 for a source without words."""
    words = set(_WORD.findall(source.lower()))
    if not words:
        return 1.0
    have = set(_WORD.findall(text.lower()))
    return sum(1 for w in words if has_form(w, have)) / len(words)


def echoed_line(value: str, prompt_text: str, source: str | None = None,
                min_length_ratio: float = UNTAGGED_LENGTH_RATIO[0], max_length_ratio: float = UNTAGGED_LENGTH_RATIO[1],
                min_word_overlap: float = UNTAGGED_MIN_OVERLAP) -> str | None:
    """The line of ``prompt_text`` (lines and tags split it) that ``value`` copies, or None: ``value``'s words
    run unbroken through the line for :data:`ECHO_MIN_WORDS` words or more (or make up the whole line), or
    are within :data:`ECHO_SIMILARITY` of it. Lines that are themselves rewrites of ``source`` (within the
    same bounds as a rewrite: the length ratios and word overlap given) and the source's own text are never
    counted: a rewrite may of course resemble its source and the drafts of it a prompt shows. So with a
    source, a copied demonstration is mostly refused by those bounds already; without one (a prompt that
    states what to write, as CoBA's reconstruction does), this check is what refuses it."""
    from rapidfuzz import fuzz

    words = word_sequence(value)
    if not words:
        return None
    joined = " " + " ".join(words) + " "
    src = word_sequence(source) if source else ()
    for raw in _TAG_MARK.split(prompt_text):
        for line in raw.split("\n"):
            seg = word_sequence(_LINE_LABEL.sub("", line))
            if not seg or seg == src:
                continue
            text = " " + " ".join(seg) + " "
            contained = (len(words) >= ECHO_MIN_WORDS or len(words) == len(seg)) and joined in text
            close = len(seg) >= 3 and fuzz.ratio(joined.strip(), text.strip()) >= ECHO_SIMILARITY
            if not (contained or close):
                continue
            if src and min_length_ratio <= length_ratio(line, source or "") <= max_length_ratio \
                    and word_overlap(line, source or "") >= min_word_overlap:
                continue  # a draft of this very rewrite shown in the prompt (Self-Refine, Compare&Generate)
            return line.strip()
    return None


class Label(Parser):
    """One label out of ``labels`` (context). Accepts ``<label>x</label>``, an answer that is just a
    label, or an answer mentioning exactly one label (as a whole word); ``aliases`` (context, alias ->
    label) add spellings such as ``pos``. Two different labels mentioned is an error, not a guess."""

    name = "label"

    def parse(self, answer: str, *, labels: Sequence[str] = (), aliases: Mapping[str, str] | None = None,
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

    def parse_truncated(self, answer: str, **context: Any) -> str:
        inner = closed_tag(answer or "", "label")
        if inner is None:
            return super().parse_truncated(answer, **context)
        return self.parse(f"<label>{inner}</label>", **context)

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

    def parse(self, answer: str, **context: Any) -> list[tuple[str, str, str]]:
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

    def parse(self, answer: str, **context: Any) -> str:
        text = (answer or "").strip()
        if not text:
            raise ParseError("the answer is empty", EMPTY)
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

    def parse(self, answer: str, *, low: float = 1.0, high: float = 5.0, **context: Any) -> float:
        value = float(one_number(answer, "score", self.patterns))
        if not low <= value <= high:
            raise ParseError(f"the score {value:g} is outside {low:g} to {high:g}")
        return value

    def parse_truncated(self, answer: str, **context: Any) -> float:
        inner = closed_tag(answer or "", "score")
        if inner is None:
            return super().parse_truncated(answer, **context)
        return self.parse(f"<score>{inner}</score>", **context)

    def reminder(self, *, low: float = 1.0, high: float = 5.0, **context: Any) -> str:
        return f"Answer with one number from {low:g} to {high:g} only, between <score> and </score>."


class Count(Parser):
    """A natural number (0, 1, 2...): ``<count>n</count>``, an answer that is just the number, a number
    after ``count``, ``score`` or ``number``, or an answer with exactly one number. A negative or
    fractional number is an error."""

    name = "count"
    patterns = (rf"(?:count|score|number)\w*\W{{0,3}}(?:is|of|=)?\W{{0,3}}({_NUMBER})",)

    def parse(self, answer: str, **context: Any) -> int:
        number = one_number(answer, "count", self.patterns)
        value = float(number)
        if value < 0 or not value.is_integer():
            raise ParseError(f"the count {number} is not a whole number of 0 or more")
        return int(value)

    def parse_truncated(self, answer: str, **context: Any) -> int:
        inner = closed_tag(answer or "", "count")
        if inner is None:
            return super().parse_truncated(answer, **context)
        return self.parse(f"<count>{inner}</count>", **context)

    def reminder(self, **context: Any) -> str:
        return "Answer with one whole number (0, 1, 2, ...) only, between <count> and </count>."


class SemanticTriples(Parser):
    """Numbered ``subject | predicate | object`` lines, grouped by ``sent1:`` / ``sent2:`` headers when the
    answer has them (NLI); one group otherwise. Numbering (``1.``, ``1-2.``, ``-``) and chatter lines
    without ``|`` are ignored; a line with two parts has an empty object, extra parts join the object."""

    name = "semantic_triples"

    def parse(self, answer: str, *, groups: int = 1, **context: Any) -> list[list[tuple[str, str, str]]]:
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
