"""Agreement coefficients against published worked examples, hand-worked cases and (where installed)
independent implementations."""

from __future__ import annotations

import random

import pytest

from cfaug.evaluate.agreement import (
    agreement, cohen_kappa, fleiss_kappa, fleiss_kappa_counts, krippendorff_alpha,
)


def units_from_rows(rows: dict[str, str]) -> dict[int, dict[str, str]]:
    """Observer -> one string of values per unit ('.' = missing), as Krippendorff's tables print them."""
    split = {obs: vals.split() for obs, vals in rows.items()}
    n = len(next(iter(split.values())))
    return {i: {obs: v[i] for obs, v in split.items() if v[i] != "."} for i in range(n)}


def two_raters(table: list[list[int]], cats=("yes", "no")) -> dict[int, dict[str, str]]:
    """A 2x2 (or kxk) contingency table (rows: rater A, columns: rater B) as units."""
    units, i = {}, 0
    for r, row in enumerate(table):
        for c, n in enumerate(row):
            for _ in range(n):
                units[i] = {"A": cats[r], "B": cats[c]}
                i += 1
    return units


# -- Krippendorff's alpha: the examples of Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability"
def test_alpha_krippendorff_2011_example_c_nominal_four_observers_missing_data():
    units = units_from_rows({
        "A": "1 2 3 3 2 1 4 1 2 . . .",
        "B": "1 2 3 3 2 2 4 1 2 5 . 3",
        "C": ". 3 3 3 2 3 4 2 2 5 1 .",
        "D": "1 2 3 3 2 4 4 1 2 5 1 .",
    })
    assert round(krippendorff_alpha(units), 3) == 0.743
    # worked by hand as in the paper: n = 40 pairable values (unit 12 has one value only), with
    # n_c = 9, 13, 10, 5, 3 for the values 1..5; the disagreeing coincidences sum to 8 (unit 2: 2, unit 6:
    # 12 pairs / 3 = 4, unit 8: 2), so D_o = 8/40 and D_e = (40^2 - sum n_c^2) / (40 * 39) = 1216/1560
    assert krippendorff_alpha(units) == pytest.approx(1 - (8 / 40) / (1216 / 1560))


def test_alpha_krippendorff_2011_example_a_binary_two_observers():
    units = units_from_rows({"A": "0 1 0 0 0 0 0 0 1 0", "B": "1 1 1 0 0 1 0 0 0 0"})
    assert round(krippendorff_alpha(units), 3) == 0.095
    assert krippendorff_alpha(units) == pytest.approx(1 - (8 / 20) / (2 * 14 * 6 / (20 * 19)))


def test_alpha_ignores_units_with_one_value_and_is_undefined_without_variation():
    units = {1: {"a": "x", "b": "x"}, 2: {"a": "y"}, 3: {"a": "y", "b": "y", "c": "y"}}
    assert krippendorff_alpha(units) == 1.0  # unit 2 has nothing to pair with; the others agree
    units[2] = {"a": "x"}
    assert krippendorff_alpha(units) == 1.0
    units = {1: {"a": "x", "b": "x"}, 2: {"a": "x", "b": "x"}}
    assert krippendorff_alpha(units) is None  # one value only: no expected disagreement
    assert krippendorff_alpha({1: {"a": "x"}}) is None


def test_alpha_perfect_agreement_is_one_and_systematic_disagreement_negative():
    assert krippendorff_alpha({1: {"a": "x", "b": "x"}, 2: {"a": "y", "b": "y"}}) == 1.0
    assert krippendorff_alpha({1: {"a": "x", "b": "y"}, 2: {"a": "y", "b": "x"}}) < 0


# -- Fleiss' kappa -----------------------------------------------------------------------------------------------
FLEISS_WIKIPEDIA = [  # 10 subjects, 14 raters, 5 categories: the worked example on Wikipedia ("Fleiss' kappa")
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]


def test_fleiss_published_example():
    assert round(fleiss_kappa_counts(FLEISS_WIKIPEDIA), 3) == 0.210
    # the same data as labels of 14 named raters gives the same value
    units = {}
    for i, row in enumerate(FLEISS_WIKIPEDIA):
        labels = [c for c, n in enumerate(row) for _ in range(n)]
        units[i] = {f"r{k}": lab for k, lab in enumerate(labels)}
    assert fleiss_kappa(units) == pytest.approx(fleiss_kappa_counts(FLEISS_WIKIPEDIA))


def test_fleiss_hand_worked_three_raters():
    # items: (x,x,x) (x,x,y) (y,y,y) (x,y,y): P_i = 1, 1/3, 1, 1/3 -> P = 2/3; p_x = p_y = 1/2 -> P_e = 1/2
    units = {1: dict(a="x", b="x", c="x"), 2: dict(a="x", b="x", c="y"), 3: dict(a="y", b="y", c="y"),
             4: dict(a="x", b="y", c="y")}
    assert fleiss_kappa(units) == pytest.approx((2 / 3 - 1 / 2) / (1 - 1 / 2))


def test_fleiss_with_two_raters_is_scotts_pi():
    units = units_from_rows({"A": "0 1 0 0 0 0 0 0 1 0", "B": "1 1 1 0 0 1 0 0 0 0"})
    # Scott's pi: p_o = 0.6, pooled proportions 0.7 / 0.3 -> p_e = 0.58
    assert fleiss_kappa(units) == pytest.approx((0.6 - 0.58) / (1 - 0.58))


def test_fleiss_rejects_a_ragged_table():
    with pytest.raises(ValueError, match="same number of categories"):
        fleiss_kappa_counts([[1, 1], [2, 0, 0]])


# -- Cohen's kappa ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("table, expected", [
    ([[20, 5], [10, 15]], 0.4),        # Wikipedia "Cohen's kappa", simple example: p_o 0.7, p_e 0.5
    ([[45, 15], [25, 15]], 0.1304),    # Wikipedia, same agreement but different marginals
    ([[25, 35], [5, 35]], 0.2593),
])
def test_cohen_published_examples(table, expected):
    assert round(cohen_kappa(two_raters(table), "A", "B"), 4) == expected


def test_cohen_uses_only_items_both_labelled():
    units = two_raters([[20, 5], [10, 15]])
    units["extra1"] = {"A": "yes"}
    units["extra2"] = {"B": "no", "C": "no"}
    assert cohen_kappa(units, "A", "B") == pytest.approx(0.4)
    assert cohen_kappa(units, "A", "C") is None
    assert cohen_kappa({1: {"A": "y", "B": "y"}}, "A", "B") is None  # no variation: undefined


def test_against_independent_implementations():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    agreement_mod = pytest.importorskip("nltk.metrics.agreement")
    rng = random.Random(7)
    for _ in range(5):
        units = {}
        for i in range(60):
            truth = rng.choice("abc")
            units[i] = {r: (truth if rng.random() < 0.7 else rng.choice("abc")) for r in ("r1", "r2", "r3")
                        if rng.random() < 0.85}
        both = [u for u in units.values() if "r1" in u and "r2" in u]
        expected = sklearn_metrics.cohen_kappa_score([u["r1"] for u in both], [u["r2"] for u in both])
        assert cohen_kappa(units, "r1", "r2") == pytest.approx(expected)
        data = [(r, str(i), v) for i, u in units.items() if len(u) >= 2 for r, v in u.items()]
        assert krippendorff_alpha(units) == pytest.approx(agreement_mod.AnnotationTask(data).alpha())


# -- the summary ----------------------------------------------------------------------------------------------------
def test_agreement_two_annotators():
    units = two_raters([[20, 5], [10, 15]])
    units["only-a"] = {"A": "yes"}
    ag = agreement(units)
    assert ag.annotators == ["A", "B"] and ag.shared == 50
    assert ag.cohen == pytest.approx(0.4) and ag.observed == pytest.approx(0.7)
    assert ag.pairwise == {("A", "B"): (50, pytest.approx(0.4))}
    assert ag.alpha is not None and ag.fleiss is not None
    d = ag.to_dict()
    assert d["cohen_kappa"] == pytest.approx(0.4) and d["pairwise"]["A|B"]["items"] == 50


def test_agreement_many_annotators_and_no_shared_items():
    units = units_from_rows({
        "A": "1 2 3 3 2 1 4 1 2 . . .",
        "B": "1 2 3 3 2 2 4 1 2 5 . 3",
        "C": ". 3 3 3 2 3 4 2 2 5 1 .",
        "D": "1 2 3 3 2 4 4 1 2 5 1 .",
    })
    ag = agreement(units)
    assert ag.cohen is None and round(ag.alpha, 3) == 0.743 and ag.shared == 11
    assert len(ag.pairwise) == 6
    empty = agreement({1: {"A": "x"}, 2: {"B": "y"}})
    assert empty.shared == 0 and empty.alpha is None and empty.fleiss is None and empty.observed is None
