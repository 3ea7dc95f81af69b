"""Explicit ratings in a review, mirrored to the other side of the scale for the target polarity.

Forms handled: ``8/10``, ``8 / 10``, ``4 out of 5``, ``ten out of ten``, ``3 stars``, ``one star``,
``4-star``, "give it a 9" / "rated it an 8" (with the article made to agree), and "thumbs up" /
"thumbs down". A rating is mirrored on its scale (1..10 <-> 10..1, 1..5 <-> 5..1) only when it sits on
the wrong side of the middle for the target; stars without a scale are read on a 5-point scale (10 when
the number is above 5). Number words stay words ("ten" -> "one").
"""

from __future__ import annotations

import re

from cfaug.editing.text import Edit, match_case
from cfaug.nlp.inflect import indefinite_article

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
_NUM = r"(\d{1,2}(?:\.\d)?|" + "|".join(WORDS) + ")"

_OUT_OF = re.compile(_NUM + r"\s*(/|out of)\s*(10|5|ten|five)\b", re.IGNORECASE)
_STARS = re.compile(r"(?<![/\d])\b" + _NUM + r"(\s*|-)(stars?)\b", re.IGNORECASE)
_GIVE = re.compile(r"\b(give|gave|giving|gives|rate|rated|rating|rates|score|scored)\s+(it|this(?: \w+)?)\s+"
                   r"(an?)\s+" + _NUM + r"\b(?!\s*(/|out of|stars?|-star))", re.IGNORECASE)
_THUMBS = re.compile(r"\bthumbs?(\s+|-)(up|down)\b", re.IGNORECASE)


def _value(s: str) -> float:
    low = s.lower()
    return float(WORDS.index(low)) if low in WORDS else float(s)


def _write(value: float, like: str) -> str:
    if like.lower() in WORDS and value == int(value):
        return match_case(like, WORDS[int(value)])
    return f"{value:g}"


def _mirror(value: float, scale: int, target_polarity: str) -> float | None:
    """The mirrored value, or None when ``value`` already suits the target (or is off the scale)."""
    if value > scale or value < 0:
        return None
    mid = scale / 2
    wrong = (value > mid) if target_polarity == "negative" else (value < mid)
    if not wrong:
        return None
    return max(scale + 1 - value, 0) if value >= 1 else scale  # 0/10 -> 10/10


#: a rating its own sentence explains as the least the site allows ("one star because you have to give
#: one", "if I could give zero stars"): mirrored, the sentence would contradict itself, so it stays
_FORCED = re.compile(r"\b(have|had|has|need|needs|needed|forced|required|must)\s+(to\s+)?(give|provide|leave|pick|"
                     r"choose|select|rate|put|post)\b|\bforced\b|\bonly because\b|\bif (i|we|you) could\b|"
                     r"\b(zero|0|no|negative|minus)\s+stars?\b|\bless than (one|1)\b|\blowest\b",
                     re.IGNORECASE)


def _forced_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` that say their rating is forced (:data:`_FORCED`)."""
    from cfaug.editing.text import sentence_spans

    return [(a, b) for a, b in sentence_spans(text) if _FORCED.search(text, a, b)]


def score_edits(text: str, target_polarity: str | None) -> list[Edit]:
    """Edits that mirror every explicit rating of ``text`` toward ``target_polarity`` (see module doc), but
    not a rating whose sentence calls it forced ("one star because you have to provide a rating")."""
    if target_polarity not in ("positive", "negative"):
        return []
    edits: list[Edit] = []
    taken: list[tuple[int, int]] = list(_forced_spans(text))

    def add(edit: Edit) -> None:
        if all(edit.end <= s or edit.start >= e for s, e in taken):
            edits.append(edit)
            taken.append((edit.start, edit.end))

    for m in _OUT_OF.finditer(text):
        scale = int(_value(m.group(3)))
        new = _mirror(_value(m.group(1)), scale, target_polarity)
        if new is not None:
            add(Edit(m.start(1), m.end(1), _write(new, m.group(1)), m.group(1), "replace"))
    for m in _STARS.finditer(text):
        value = _value(m.group(1))
        new = _mirror(value, 10 if value > 5 else 5, target_polarity)
        if new is not None:
            unit = m.group(3)
            if m.group(2) != "-":  # "1 star" <-> "5 stars"
                unit = match_case(unit, "star" if new == 1 else "stars")
            add(Edit(m.start(1), m.end(3), _write(new, m.group(1)) + m.group(2) + unit, m.group(0), "replace"))
    for m in _GIVE.finditer(text):
        value = _value(m.group(4))
        new = _mirror(value, 10, target_polarity)
        if new is not None:
            number = _write(new, m.group(4))
            article = match_case(m.group(3), indefinite_article(number))
            add(Edit(m.start(3), m.end(4), f"{article} {number}", text[m.start(3):m.end(4)], "replace"))
    for m in _THUMBS.finditer(text):
        want = "down" if target_polarity == "negative" else "up"
        if m.group(2).lower() != want:
            add(Edit(m.start(2), m.end(2), match_case(m.group(2), want), m.group(2), "replace"))
    return sorted(edits, key=lambda e: e.start)
