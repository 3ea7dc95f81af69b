import numpy as np
import pytest

from cfaug.judges.base import Candidate
from cfaug.judges.mover import earth_movers_distance, mover_score
from cfaug.judges.token_embeddings import TokenEncoder


@pytest.fixture(scope="module")
def minilm():
    """The packaged MiniLM's token vectors (default path, offline)."""
    return TokenEncoder(device="cpu")


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
    # unit vectors, two against three: {e1, e2} vs {e1, e1, e2}: 1/6 of mass moves e2 -> e1 at cost sqrt(2)
    e1, e2 = [1.0, 0.0], [0.0, 1.0]
    assert earth_movers_distance(np.array([e1, e2]), np.array([e1, e1, e2])) == pytest.approx(np.sqrt(2) / 6)
    assert earth_movers_distance(np.array([e1, e2]), np.array([e2, e1])) == 0.0  # order does not matter
    assert np.isnan(earth_movers_distance(np.zeros((0, 2)), np.array([e1])))


def test_identical_texts_score_one_and_edits_rank_below(minilm):
    original = "The film was wonderful and the acting was superb."
    same, edit, unrelated = mover_score(minilm, [original] * 3, [
        original, "The film was awful and the acting was superb.", "Interest rates rose sharply in March."])
    assert same == pytest.approx(1.0, abs=1e-6)
    assert unrelated < edit < same
    assert mover_score(minilm, ["a b"], ["b a"])[0] == pytest.approx(mover_score(minilm, ["b a"], ["a b"])[0])
    assert np.isnan(mover_score(minilm, [""], ["something"])[0])
    with pytest.raises(ValueError, match="2 originals but 1 rewrites"):
        mover_score(minilm, ["a", "b"], ["a"])


def test_long_texts_are_windowed_not_truncated():
    enc = TokenEncoder(max_length=16, device="cpu")  # 14 word pieces per window
    body = "the acting was fine and the story moved along at a decent pace for most of the running time " * 2
    a, b = body + "but the ending was great .", body + "but the ending was awful ."
    va, vb = enc.encode([a, b])
    assert len(va) == len(vb) == len(enc.tokenizer(a, add_special_tokens=False, verbose=False)["input_ids"]) > 40
    assert np.allclose(np.linalg.norm(va, axis=1), 1.0, atol=1e-5)
    before_last = (len(va) - 1) // 14 * 14  # word pieces in the windows before the last one
    assert np.allclose(va[:before_last], vb[:before_last], atol=1e-6)  # windows do not see the edit
    score = mover_score(enc, [a], [b])[0]
    assert score < 1.0 - 1e-3  # a truncating encoder would see two identical texts and score 1
    assert enc.describe()["max_length"] == 16


def test_judge_scores_new_text_against_old(minilm):
    from cfaug.data.tasks import SentimentTask
    from cfaug.judges.registry import JUDGES, JudgeContext, build_judge

    judge = build_judge({"@judges": "moverscore", "max_length": 64}, JudgeContext(SentimentTask(), device="cpu"))
    assert JUDGES.resolve("moverscore") == "moverscore.v1" and JUDGES.get("moverscore").kind == "score"
    batch = [Candidate({"text": "A great film."}, {"text": "A great film."}, "negative"),
             Candidate({"text": "A great film."}, {"text": "An awful film."}, "negative")]
    scores = judge.score(batch)
    assert scores.shape == (2,) and scores[0] == pytest.approx(1.0, abs=1e-6) and scores[1] < 1.0
    assert scores[1] == pytest.approx(mover_score(minilm, ["A great film."], ["An awful film."])[0], abs=1e-5)
    d = judge.describe()
    assert d["judge"] == "moverscore" and d["max_length"] == 64 and d["weights"] == "uniform over tokens"
    assert judge.score([]).shape == (0,)
