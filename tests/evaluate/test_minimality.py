import numpy as np
import pytest

from cfaug.evaluate.minimality import earth_movers_distance, edit_rate, mover_distance
from cfaug.evaluate.token_embeddings import TokenEncoder


def test_edit_rate_hand_computed():
    r = edit_rate(["the film is good .", "a b c d", "It's fine"], ["the film is bad .", "a c d e", "It's fine"])
    # one substitution in five tokens; a deletion and an insertion in four; nothing
    assert r.per_item == pytest.approx([0.2, 0.5, 0.0])
    assert r.value == pytest.approx(0.7 / 3)
    assert r.higher_is_better is False
    assert "Levenshtein" in r.settings["distance"]


def test_emd_hand_computed_on_a_line():
    # equal sizes: optimal matching 0->0 and 1->3
    assert earth_movers_distance(np.array([[0.0], [1.0]]), np.array([[0.0], [3.0]])) == pytest.approx(1.0)
    # one point against two: half the mass to each
    assert earth_movers_distance(np.array([[0.0]]), np.array([[1.0], [3.0]])) == pytest.approx(2.0)
    # {0, 2} (1/2 each) against {0, 1, 2} (1/3 each): 1/6 moves 0->1 and 1/6 moves 2->1
    x, y = np.array([[0.0], [2.0]]), np.array([[0.0], [1.0], [2.0]])
    assert earth_movers_distance(x, y) == pytest.approx(1 / 3)
    assert earth_movers_distance(y, x) == pytest.approx(1 / 3)
    # Euclidean cost in two dimensions
    assert earth_movers_distance(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])) == pytest.approx(5.0)


def test_mover_distance_zero_for_identical_texts(tiny_bert):
    enc = TokenEncoder(tiny_bert)
    r = mover_distance(["the plot was boring .", "it was good"], ["the plot was boring .", "it was bad"], enc)
    assert r.per_item[0] == pytest.approx(0.0, abs=1e-5)
    assert 0.0 < r.per_item[1] <= 2.0
    assert r.details["similarity"] == pytest.approx(1 - r.value)
