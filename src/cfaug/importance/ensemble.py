"""Principal and spurious words by an ensemble of classifiers and attribution methods (CoBA, section 3.3.2).

Every (classifier, attribution method) pair is a *voter*: it names the top ``k`` words of a text that
support the text's label. A word is *principal* (W_p: words the label rests on for most models) when the
number of voters naming it passes the threshold ``tau``; the other named words are *spurious* (W_s: words
only some models lean on). A user list (e.g. gender words) can be added to W_s by the caller.

The paper counts one top-k list per classifier and sets ``tau = (|M| + 1) / 2`` for an odd number of
classifiers |M|; a word is principal when it appears "more than" ``tau`` times. Here |M| is read as the
number of voters V (models x attribution methods; with one attribution method V = |M|), ``tau`` defaults to
``(V + 1) / 2``, and ``rule`` (:data:`TAU_RULES`) says how a count is compared with it:

* ``at-least`` (cfaug's default): at least ``tau`` votes, i.e. a majority of the voters (3 of 5, 4 of 6);
* ``more-than`` (the paper's text): more than ``tau`` votes (4 of 5, 3 of 3, 4 of 6). For an even V the
  two rules agree, since ``(V + 1) / 2`` is no whole number; with a single voter nothing could be principal,
  and :class:`Ensemble` refuses that setting.

:func:`overlap` is the paper's Table 1 analysis: for one attribution method, the share of texts where
every model's top-k shares a word, and where at least two models do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cfaug.config import ConfigError
from cfaug.importance.cache import VoteCache, vote_key
from cfaug.importance.words import WordImportance


@dataclass
class Votes:
    """The ensemble's verdict on one text."""

    principal: list[str]
    spurious: list[str]
    votes: dict[str, int]  #: votes per named word
    top: dict[str, list[str]] = field(default_factory=dict)  #: each voter's top-k ("model/method" -> words)

    def to_json(self) -> dict[str, Any]:
        return {"principal": self.principal, "spurious": self.spurious, "votes": self.votes, "top": self.top}


#: how a word's vote count is compared with the threshold tau (see the module docstring)
TAU_RULES = ("at-least", "more-than")


def majority(voters: int) -> int:
    """The default threshold: more than half of the voters (at least 1)."""
    return max(1, voters // 2 + 1)


def votes_needed(voters: int, tau: int | None = None, rule: str = "at-least") -> int:
    """The fewest votes that make a word principal among ``voters`` voters: at least ``tau`` (``at-least``)
    or more than ``tau`` (``more-than``), ``tau`` being ``(voters + 1) / 2`` when not given. ``at-least``
    with the default ``tau`` is :func:`majority`."""
    if rule not in TAU_RULES:
        raise ValueError(f"unknown tau rule {rule!r}; use one of {', '.join(TAU_RULES)}")
    if tau is None:  # tau = (voters + 1) / 2, which may be a half
        return majority(voters) if rule == "at-least" else (voters + 1) // 2 + 1
    return tau if rule == "at-least" else tau + 1


def vote(top: Mapping[str, Sequence[str]], tau: int | None = None, rule: str = "at-least") -> Votes:
    """Principal and spurious words from each voter's top words (``tau`` and ``rule``: see
    :func:`votes_needed`; the voters are the keys of ``top``). Words keep the order of their first naming."""
    counts: Counter[str] = Counter()
    order: dict[str, None] = {}
    for words in top.values():
        for w in dict.fromkeys(words):
            counts[w] += 1
            order.setdefault(w, None)
    need = votes_needed(len(top), tau, rule)
    principal = [w for w in order if counts[w] >= need]
    spurious = [w for w in order if counts[w] < need]
    return Votes(principal, spurious, {w: counts[w] for w in order}, {k: list(v) for k, v in top.items()})


class Ensemble:
    """Voters = every classifier in ``models`` explained by every method in ``methods``."""

    def __init__(self, models: Mapping[str, Any], methods: Sequence[WordImportance], k: int = 5,
                 tau: int | None = None, seed: int = 0, cache: VoteCache | None = None,
                 tau_rule: str = "at-least") -> None:
        if not models or not methods:
            raise ValueError("an importance ensemble needs at least one model and one method")
        self.models, self.methods, self.k, self.tau, self.seed = dict(models), list(methods), k, tau, seed
        self.tau_rule = tau_rule
        voters = len(self.models) * len(self.methods)
        need = votes_needed(voters, tau, tau_rule)  # an unknown rule stops here
        if tau is None and need > voters:
            raise ConfigError(f"tau rule {tau_rule}: a word would need more than (V + 1) / 2 = {(voters + 1) / 2:g} "
                              f"votes of {voters} voter(s), so none could be principal; use more models or "
                              "attribution methods, or the at-least rule")
        for model in self.models.values():  # a voter that can never vote stops the run here, not per text
            for meth in self.methods:
                meth.check(model)
        self.cache = cache  #: top words read back instead of explained again (scope: these models)

    @property
    def voters(self) -> list[str]:
        return [f"{m}/{meth.name}" for m in self.models for meth in self.methods]

    def top_words(self, texts: Sequence[str], labels: Sequence[str]) -> list[dict[str, list[str]]]:
        """For each text, each voter's top-``k`` words supporting the text's label."""
        out: list[dict[str, list[str]]] = [{} for _ in texts]
        for mname, model in self.models.items():
            cols = [list(model.labels).index(lab) for lab in labels]
            for meth in self.methods:
                voter = f"{mname}/{meth.name}"
                todo = list(range(len(texts)))
                if self.cache is not None:
                    desc = meth.describe()
                    keys = [vote_key(voter, desc, self.k, self.seed, str(lab), t) for t, lab in zip(texts, labels)]
                    cached = self.cache.get(keys)
                    for i, key in enumerate(keys):
                        if key in cached:
                            out[i][voter] = cached[key]
                    todo = [i for i, key in enumerate(keys) if key not in cached]
                if not todo:
                    continue
                explained = meth.explain(model, [texts[i] for i in todo], [cols[i] for i in todo], seed=self.seed)
                for i, scores in zip(todo, explained):
                    out[i][voter] = scores.top(self.k)
                if self.cache is not None:
                    self.cache.put({keys[i]: out[i][voter] for i in todo})
        return out

    def explain(self, texts: Sequence[str], labels: Sequence[str]) -> list[Votes]:
        return [vote(top, self.tau, self.tau_rule) for top in self.top_words(texts, labels)]

    def describe(self) -> dict[str, Any]:
        """The ensemble's settings; ``tau`` is the number of votes a word needs (see :func:`votes_needed`)."""
        v = len(self.voters)
        return {"models": {n: (m.describe() if hasattr(m, "describe") else str(m)) for n, m in self.models.items()},
                "methods": [m.describe() for m in self.methods], "k": self.k,
                "tau": votes_needed(v, self.tau, self.tau_rule), "tau_rule": self.tau_rule,
                "threshold": self.tau if self.tau is not None else (v + 1) / 2,
                "voters": len(self.voters), "cache": self.cache.describe() if self.cache is not None else None}


@dataclass
class Overlap:
    """Table 1 of the CoBA paper for one attribution method."""

    method: str
    texts: int
    all_models: float  #: % of texts where the top-k of every model share at least one word
    two_or_more: float  #: % of texts where at least two models share a word

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "texts": self.texts, "all_models": round(self.all_models, 2),
                "two_or_more": round(self.two_or_more, 2)}


def overlap(tops: Sequence[Mapping[str, Sequence[str]]], method: str) -> Overlap:
    """Table 1 from :meth:`Ensemble.top_words` output, restricted to the voters of ``method``."""
    n_all = n_two = n = 0
    for top in tops:
        sets = [set(v) for k, v in top.items() if k.rsplit("/", 1)[1] == method]
        if len(sets) < 2:
            continue
        n += 1
        n_all += bool(set.intersection(*sets))
        counts = Counter(w for s in sets for w in s)
        n_two += any(c >= 2 for c in counts.values())
    pct = (lambda x: 100.0 * x / n) if n else (lambda x: float("nan"))
    return Overlap(method, n, pct(n_all), pct(n_two))


__all__ = ["TAU_RULES", "Ensemble", "Overlap", "Votes", "majority", "overlap", "vote", "votes_needed"]
