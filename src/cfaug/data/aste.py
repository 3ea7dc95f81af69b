"""Aspect sentiment triplets: the label of the ``aste`` task.

An ASTE example is a tokenized sentence and a set of (aspect, opinion, polarity) triplets, each term a run of
token indices. ASTE-Data-V2 (Xu et al., 2020) writes one example per line::

    The food was great but the service slow .####[([1], [3], 'POS'), ([6], [7], 'NEG')]

In cfaug such a line is a :class:`~cfaug.data.records.Record` whose ``text`` is the sentence (tokens joined by
single spaces) and whose label is the part after ``####`` in a canonical spelling (:func:`format_triplets`),
so the label keeps its spans wherever records go (run directories, outputs, ``cfaug evaluate``). The
sequence generators read, ``food | great | positive ; service | slow | negative``, is
:func:`label_sequence`; :func:`parse_label_sequence` finds such a sequence's terms back in a sentence.

>>> ex = parse_line("The food was great .####[([1], [3], 'POS')]")
>>> label_sequence(ex.tokens, ex.triplets)
'food | great | positive'
>>> format_line(ex)
"The food was great .####[([1], [3], 'POS')]"
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

SEPARATOR = "####"
#: polarity codes of ASTE-Data-V2 and the words label sequences use
POLARITY_WORDS = {"POS": "positive", "NEU": "neutral", "NEG": "negative"}
WORD_POLARITY = {v: k for k, v in POLARITY_WORDS.items()}


class AsteFormatError(ValueError):
    """A line, label or label sequence that is not valid ASTE data (the message says what is wrong)."""


@dataclass(frozen=True, order=True)
class Triplet:
    """One (aspect, opinion, polarity) triplet: ``aspect`` and ``opinion`` are increasing runs of token
    indices (0-based, as in ASTE-Data-V2), ``polarity`` one of ``POS``, ``NEU``, ``NEG``."""

    aspect: tuple[int, ...]
    opinion: tuple[int, ...]
    polarity: str

    def __post_init__(self) -> None:
        for name, span in (("aspect", self.aspect), ("opinion", self.opinion)):
            if not span:
                raise AsteFormatError(f"empty {name} span")
            if any(not isinstance(i, int) or isinstance(i, bool) or i < 0 for i in span):
                raise AsteFormatError(f"{name} span {list(span)} holds something other than token indices")
            if list(span) != list(range(span[0], span[0] + len(span))):
                raise AsteFormatError(f"{name} span {list(span)} is not a run of consecutive token indices")
        if self.polarity not in POLARITY_WORDS:
            raise AsteFormatError(f"polarity {self.polarity!r} is not one of {', '.join(POLARITY_WORDS)}")

    @classmethod
    def from_bounds(cls, aspect: tuple[int, int], opinion: tuple[int, int], polarity: str) -> Triplet:
        """A triplet from inclusive (first, last) token positions of each term."""
        return cls(tuple(range(aspect[0], aspect[1] + 1)), tuple(range(opinion[0], opinion[1] + 1)), polarity)

    @property
    def aspect_bounds(self) -> tuple[int, int]:
        return self.aspect[0], self.aspect[-1]

    @property
    def opinion_bounds(self) -> tuple[int, int]:
        return self.opinion[0], self.opinion[-1]

    def terms(self, tokens: Sequence[str]) -> tuple[str, str]:
        """The aspect and opinion terms as text."""
        return " ".join(tokens[i] for i in self.aspect), " ".join(tokens[i] for i in self.opinion)

    def max_index(self) -> int:
        return max(self.aspect[-1], self.opinion[-1])

    def to_json(self) -> list[Any]:
        return [list(self.aspect), list(self.opinion), self.polarity]


@dataclass(frozen=True)
class AsteExample:
    """A tokenized sentence and its triplets (sorted, without duplicates)."""

    tokens: tuple[str, ...]
    triplets: tuple[Triplet, ...]
    id: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def sentence(self) -> str:
        return " ".join(self.tokens)

    def label(self) -> str:
        """The canonical label string (what follows ``####``)."""
        return format_triplets(self.triplets)

    def label_sequence(self) -> str:
        return label_sequence(self.tokens, self.triplets)


def _parse_span(value: Any, what: str) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if not isinstance(value, (list, tuple)):
        raise AsteFormatError(f"{what} must be a list of token indices, got {value!r}")
    return tuple(value)


def parse_triplets(raw: Any) -> tuple[Triplet, ...]:
    """Triplets from the ASTE-Data-V2 spelling (``"[([1], [3], 'POS')]"``), its JSON form
    (``[[[1], [3], "POS"]]``) or such a list already parsed. Sorted and de-duplicated; an empty list is a
    valid label (a sentence with no triplet). Raises :class:`AsteFormatError` saying what is wrong."""
    value = raw
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            raise AsteFormatError("empty triplet list")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            try:
                value = json.loads(text)
            except ValueError:
                raise AsteFormatError(f"cannot parse the triplet list {text[:80]!r}") from None
    if not isinstance(value, (list, tuple)):
        raise AsteFormatError(f"a triplet list must be a list, got {type(value).__name__}")
    out: set[Triplet] = set()
    for k, item in enumerate(value, start=1):
        if not isinstance(item, (list, tuple)) or len(item) != 3:
            raise AsteFormatError(f"triplet {k} must be (aspect indices, opinion indices, polarity), got {item!r}")
        aspect, opinion, polarity = item
        pol = str(polarity).strip()
        pol = WORD_POLARITY.get(pol.lower(), pol.upper())
        try:
            out.add(Triplet(_parse_span(aspect, "aspect"), _parse_span(opinion, "opinion"), pol))
        except AsteFormatError as exc:
            raise AsteFormatError(f"triplet {k}: {exc}") from None
    return tuple(sorted(out))


def format_triplets(triplets: Iterable[Triplet]) -> str:
    """The canonical ASTE-Data-V2 spelling of a triplet list."""
    parts = [f"({list(t.aspect)}, {list(t.opinion)}, '{t.polarity}')" for t in sorted(set(triplets))]
    return "[" + ", ".join(parts) + "]"


def check_triplets(tokens: Sequence[str], triplets: Iterable[Triplet]) -> str | None:
    """Why ``triplets`` cannot label ``tokens`` (an index past the sentence), or None."""
    for k, t in enumerate(triplets, start=1):
        if t.max_index() >= len(tokens):
            return (f"triplet {k} points at token {t.max_index()} but the sentence has {len(tokens)} tokens "
                    "(indices count from 0 over the space-split sentence)")
    return None


def parse_line(line: str, id: str = "") -> AsteExample:
    """One ASTE-Data-V2 line (``sentence####triplets``)."""
    line = line.rstrip("\r\n")
    if SEPARATOR not in line:
        raise AsteFormatError(f"no {SEPARATOR!r} between the sentence and its triplets")
    sentence, raw = line.rsplit(SEPARATOR, 1)
    tokens = tuple(sentence.split())
    if not tokens:
        raise AsteFormatError("empty sentence")
    triplets = parse_triplets(raw)
    problem = check_triplets(tokens, triplets)
    if problem:
        raise AsteFormatError(problem)
    return AsteExample(tokens, triplets, id=id)


def format_line(example: AsteExample) -> str:
    return f"{example.sentence}{SEPARATOR}{example.label()}"


def label_sequence(tokens: Sequence[str], triplets: Iterable[Triplet]) -> str:
    """``aspect | opinion | polarity ; ...`` in the order of the triplets (sorted by position)."""
    parts = []
    for t in triplets:
        a, o = t.terms(tokens)
        parts.append(f"{a} | {o} | {POLARITY_WORDS[t.polarity]}")
    return " ; ".join(parts)


def parse_label_sequence(sequence: str) -> list[tuple[str, str, str]]:
    """The (aspect, opinion, polarity code) terms of a label sequence; raises :class:`AsteFormatError` for a
    part that is not ``aspect | opinion | polarity`` with a known polarity word."""
    out = []
    for k, part in enumerate(p for p in sequence.split(" ; ") if p.strip()):
        bits = [b.strip() for b in part.split(" | ")]
        if len(bits) != 3 or not bits[0] or not bits[1]:
            raise AsteFormatError(f"part {k + 1} of the label sequence is not 'aspect | opinion | polarity': {part!r}")
        pol = WORD_POLARITY.get(bits[2].lower())
        if pol is None:
            raise AsteFormatError(f"part {k + 1}: unknown polarity {bits[2]!r}")
        out.append((bits[0], bits[1], pol))
    return out


def find_term(tokens: Sequence[str], term: str, near: int | None = None) -> tuple[int, ...] | None:
    """The token indices of ``term`` (case-insensitive, token-exact) in ``tokens``; the occurrence nearest
    ``near`` when several, else the first. None when absent."""
    words = [w.lower() for w in term.split()]
    low = [t.lower() for t in tokens]
    n = len(words)
    starts = [i for i in range(len(low) - n + 1) if low[i:i + n] == words] if n else []
    if not starts:
        return None
    start = min(starts, key=lambda i: abs(i - near)) if near is not None else starts[0]
    return tuple(range(start, start + n))


def align_terms(tokens: Sequence[str], terms: Sequence[tuple[str, str, str]]) -> tuple[Triplet, ...] | None:
    """Triplets for ``terms`` (aspect text, opinion text, polarity) found in ``tokens``: each opinion is the
    occurrence nearest its aspect. None when a term does not occur in the sentence."""
    out = []
    for aspect, opinion, pol in terms:
        a = find_term(tokens, aspect)
        if a is None:
            return None
        o = find_term(tokens, opinion, near=a[0])
        if o is None:
            return None
        out.append(Triplet(a, o, pol))
    return tuple(sorted(set(out)))


def read_aste_lines(lines: Iterable[str], source: str = "<lines>") -> tuple[list[AsteExample], list[tuple[int, str, str]]]:
    """Examples from ASTE-Data-V2 lines, and the rejected ones as (line number, problem, line). Blank lines
    are skipped. Ids are line numbers."""
    examples, rejects = [], []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            examples.append(parse_line(line, id=str(n)))
        except AsteFormatError as exc:
            rejects.append((n, str(exc), line.rstrip("\r\n")))
    return examples, rejects


def read_aste(path: Any) -> list[AsteExample]:
    """Every valid example of an ASTE-Data-V2 file; raises :class:`AsteFormatError` naming the file and line
    of the first bad one (use :func:`cfaug.data.read_dataset` with ``--task aste`` to set bad lines aside)."""
    with open(path, encoding="utf-8") as fh:
        examples, rejects = read_aste_lines(fh)
    if rejects:
        n, problem, _ = rejects[0]
        raise AsteFormatError(f"{path}, line {n}: {problem}")
    return examples


def write_aste(examples: Iterable[AsteExample], path: Any) -> None:
    """Write ``examples`` as ASTE-Data-V2 lines, atomically (:mod:`cfaug.data.io.atomic`)."""
    from cfaug.data.io.atomic import atomic_open

    with atomic_open(path, "w", encoding="utf-8") as fh:
        for ex in examples:
            fh.write(format_line(ex) + "\n")


def example_from_record(record: Any, label: str | None = None) -> AsteExample:
    """The example a record of the ``aste`` task holds (``label``: another canonical label for its text)."""
    lab = label if label is not None else record.label
    return AsteExample(tuple(record.text().split()), parse_triplets(lab) if lab else (), id=record.id)
