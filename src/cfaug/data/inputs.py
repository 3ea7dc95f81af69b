"""What a model reads: one text, or a pair of texts (premise and hypothesis) that a text model reads joined
by a separator."""

from __future__ import annotations

from typing import Union

#: one text, or a (premise, hypothesis) pair
JudgeInput = Union[str, tuple[str, str]]

PAIR_SEP = " [SEP] "


def as_text(x: JudgeInput) -> str:
    """The text a text model reads for ``x``: the text itself, or a pair joined by :data:`PAIR_SEP`."""
    return x if isinstance(x, str) else PAIR_SEP.join(x)
