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


def test_the_papers_rule_needs_more_than_v_plus_one_over_two_votes():
    from cfaug.importance.ensemble import votes_needed

    # tau = (V + 1) / 2; at-least: a majority; more-than (the paper's text): one vote more for an odd V
    assert [votes_needed(v) for v in (1, 3, 5, 6, 9)] == [1, 2, 3, 4, 5]
    assert [votes_needed(v, rule="more-than") for v in (3, 5, 6, 9)] == [3, 4, 4, 6]
    assert votes_needed(5, tau=2) == 2 and votes_needed(5, tau=2, rule="more-than") == 3
    five = {f"m{i}/lime": words for i, words in enumerate(
        [["great", "plot"], ["great", "plot"], ["great", "plot"], ["great"], ["nolan"]])}
    # great: 4 of 5 votes, plot: 3 of 5 (= tau), nolan: 1
    assert vote(five).principal == ["great", "plot"]
    v = vote(five, rule="more-than")
    assert v.principal == ["great"] and v.spurious == ["plot", "nolan"]
    with pytest.raises(ValueError, match="tau rule"):
        vote(five, rule="majority")


def test_the_ensemble_applies_and_records_its_tau_rule():
    from cfaug.config import ConfigError

    table = {"m1": {"great": 2, "plot": 1}, "m2": {"great": 2, "plot": 1}, "m3": {"great": 1, "nolan": 2}}
    models = {n: M(n) for n in table}
    # three voters: plot has 2 votes = (3 + 1) / 2, principal by a majority but not "more than" tau
    (v,) = Ensemble(models, [Fixed("x", table)], k=2).explain(["great nolan plot"], ["positive"])
    assert v.principal == ["great", "plot"]
    ens = Ensemble(models, [Fixed("x", table)], k=2, tau_rule="more-than")
    (v,) = ens.explain(["great nolan plot"], ["positive"])
    assert v.principal == ["great"] and v.spurious == ["plot", "nolan"]
    d = ens.describe()
    assert (d["tau"], d["tau_rule"], d["threshold"], d["voters"]) == (3, "more-than", 2.0, 3)
    with pytest.raises(ConfigError, match="none could be principal"):
        Ensemble({"m1": M("m1")}, [Fixed("x", table)], tau_rule="more-than")
    with pytest.raises(ValueError, match="tau rule"):
        Ensemble(models, [Fixed("x", table)], tau_rule="over")
