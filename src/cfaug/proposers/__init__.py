"""Proposers make candidate edits, registered by versioned name so that ``cfaug parts`` lists them and any
method can name one in its config. The built-in word-replacement proposers (``lexicon.v1``, an opinion
lexicon ranked by word vectors, antonyms and mined pairs; ``masked-lm.v1``, a masked language model by local
path) live in :mod:`cfaug.proposers.replacements`; auto-CAD and CoBA use them.

A proposer has ``name`` and ``propose(requests) -> list[list[(candidate, score)]]``: for each request, the
candidates it suggests with a prior score, best first. What a request holds depends on the proposer family
(auto-CAD's is a word in context with a target polarity).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from cfaug.registry import Registry


class Proposer(Protocol):
    name: str

    def propose(self, requests: Sequence[Any]) -> list[list[tuple[str, float]]]: ...


#: proposer classes by versioned name (each documents its parameters)
PROPOSERS: Registry[type] = Registry("proposer")

__all__ = ["PROPOSERS", "Proposer"]
