import numpy as np
import pytest

from cfaug.evaluate.content import bertscore, embedding_cosine, greedy_match
from cfaug.judges.token_embeddings import TokenEncoder


def test_greedy_match_hand_computed():
    ref = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert greedy_match(ref, np.array([[1.0, 0.0]])) == pytest.approx((1.0, 0.5, 2 / 3))
    # candidate token at cosine 0.6 / 0.8 to the two reference tokens
    p, r, f = greedy_match(ref, np.array([[0.6, 0.8]]))
    assert (p, r) == pytest.approx((0.8, 0.7))
    assert f == pytest.approx(2 * 0.8 * 0.7 / 1.5)
    assert greedy_match(ref, np.zeros((0, 2))) == (0.0, 0.0, 0.0)


def test_bertscore_identical_is_one_and_matches_manual(tiny_bert):
    enc = TokenEncoder(tiny_bert)
    same = bertscore(["the film was good ."], ["the film was good ."], enc)
    assert same.value == pytest.approx(1.0, abs=1e-5)
    r = bertscore(["the film was good ."], ["the film was bad !"], enc)
    a, b = enc.encode(["the film was good .", "the film was bad !"])
    sim = b @ a.T
    prec, rec = sim.max(1).mean(), sim.max(0).mean()
    assert r.value == pytest.approx(2 * prec * rec / (prec + rec), rel=1e-5)
    assert r.details["precision"] == pytest.approx(prec, rel=1e-5)
    assert r.settings["idf"] is False and r.settings["model"] == str(tiny_bert)


def test_embedding_cosine_with_packaged_encoder():
    from cfaug.judges.similarity import SentenceEncoder

    enc = SentenceEncoder()
    r = embedding_cosine(["A great, moving film.", "A great, moving film."],
                         ["A great, moving film.", "The weather is cold today."], enc)
    assert r.per_item[0] == pytest.approx(1.0, abs=1e-5)
    assert r.per_item[1] < 0.5
    assert r.value == pytest.approx((r.per_item[0] + r.per_item[1]) / 2)
    assert r.settings["weights_sha256"] != "unknown"
    with pytest.raises(ValueError):
        embedding_cosine(["a"], [], enc)
