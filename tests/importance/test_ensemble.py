"""Votes of (model, method) pairs: principal = a majority, spurious = the rest; Table 1 overlap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cfaug.importance import Ensemble, overlap, vote
from cfaug.importance.ensemble import majority
from cfaug.importance.words import WordImportance, WordScores


def test_majority_of_voters_is_principal_the_rest_spurious():
    top = {"a/lime": ["great", "nolan", "plot"], "b/lime": ["great", "plot"], "c/lime": ["great", "score"]}
    v = vote(top)
    assert v.principal == ["great", "plot"] and v.spurious == ["nolan", "score"]
    assert v.votes == {"great": 3, "nolan": 1, "plot": 2, "score": 1}
    assert vote(top, tau=3).principal == ["great"]
    assert majority(9) == 5 and majority(3) == 2 and majority(1) == 1 and majority(4) == 3


def test_a_voter_naming_a_word_twice_votes_once():
    assert vote({"a/x": ["w", "w"], "b/x": ["v"]}).votes == {"w": 1, "v": 1}


class Fixed(WordImportance):
    """Ranks words by a fixed table (per model name in the scores)."""

    def __init__(self, name, table):
        self.name, self.table = name, table

    def explain(self, model, texts, columns, seed=0):
        out = []
        for t in texts:
            words = t.split()
            out.append(WordScores(words, np.array([self.table[model.name].get(w, 0.0) for w in words])))
        return out

    def describe(self):
        return {"method": self.name}


class M:
    labels = ("negative", "positive")

    def __init__(self, name):
        self.name = name


def test_ensemble_votes_over_every_model_and_method_pair():
    table = {"m1": {"great": 2, "nolan": 1}, "m2": {"great": 2, "plot": 1}, "m3": {"great": 1, "nolan": 2}}
    ens = Ensemble({n: M(n) for n in table}, [Fixed("x", table), Fixed("y", table)], k=2)
    (v,) = ens.explain(["great nolan plot"], ["positive"])
    assert ens.voters == ["m1/x", "m1/y", "m2/x", "m2/y", "m3/x", "m3/y"]
    assert v.principal == ["great", "nolan"] and v.spurious == ["plot"]  # nolan: 4 of 6 votes
    assert ens.describe()["tau"] == 4


def test_overlap_is_table_1():
    tops = [{"a/lime": ["x", "y"], "b/lime": ["x"], "c/lime": ["x", "z"]},  # all share x
            {"a/lime": ["x"], "b/lime": ["x"], "c/lime": ["z"]},  # two share
            {"a/lime": ["p"], "b/lime": ["q"], "c/lime": ["r"]},  # none
            {"a/ig": ["p"], "b/ig": ["p"]}]  # another method: not counted for lime
    o = overlap(tops, "lime")
    assert o.texts == 3 and o.all_models == pytest.approx(100 / 3) and o.two_or_more == pytest.approx(200 / 3)
    assert math.isnan(overlap([], "lime").all_models)
