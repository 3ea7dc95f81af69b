"""Word importance (LIME, Integrated Gradients, Shapley value sampling) on classifiers whose important words
are known: trained on texts where only the opinion word decides the label."""

from __future__ import annotations

import numpy as np
import pytest

from cfaug.classifiers import build_classifier
from cfaug.config import ConfigError
from cfaug.importance import WORD_IMPORTANCE, build_word_importance, candidate_words

POS = ["great", "wonderful", "superb"]
NEG = ["awful", "terrible", "dull"]
NOUNS = ["film", "story", "cast", "script", "ending", "music"]


def corpus(n: int = 120) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(0)
    texts, labels = [], []
    for i in range(n):
        pos = i % 2 == 0
        word = (POS if pos else NEG)[int(rng.integers(3))]
        noun, other = rng.choice(NOUNS, 2, replace=False)
        texts.append(f"the {noun} was {word} and the {other} was there")
        labels.append("positive" if pos else "negative")
    return texts, labels


@pytest.fixture(scope="module")
def models():
    texts, labels = corpus()
    out = {"tfidf-logreg": build_classifier("tfidf-logreg", {}, seed=0)}
    out["cnn"] = build_classifier("cnn", {"epochs": 15, "embedding_dim": 16, "filters": 8}, seed=0)
    for m in out.values():
        m.fit(texts, labels)
    return out


def test_candidate_words_drop_stop_words_punctuation_and_markup_but_keep_negators():
    w = candidate_words("It was not good.<br /><br />The plot, however, was great!")
    assert w.types == ["not", "good", "plot", "great"]
    assert "the" in candidate_words("the plot", stopwords=True).types
    assert w.text_without([True, False, True, True]) == " ".join(t for t in w.tokens if t != "good")


@pytest.mark.parametrize("method", ["lime", "integrated-gradients", "shapley"])
@pytest.mark.parametrize("model", ["tfidf-logreg", "cnn"])
def test_the_opinion_word_ranks_first(models, method, model):
    clf = models[model]
    texts = ["the story was superb and the cast was there", "the music was awful and the film was there"]
    cols = [list(clf.labels).index("positive"), list(clf.labels).index("negative")]
    scores = build_word_importance(method).explain(clf, texts, cols, seed=0)
    assert scores[0].top(1) == ["superb"] and scores[1].top(1) == ["awful"]
    assert len(scores[0].top(5)) <= 5 and all(s > 0 for s in np.sort(scores[0].scores)[-1:])


def test_integrated_gradients_on_a_linear_model_is_complete(models):
    """IG's attributions over all features sum to p(x) - p(baseline) (completeness), here checked on the
    stop-word-inclusive candidates of a text whose every token is a word."""
    from scipy.special import softmax

    clf = models["tfidf-logreg"]
    text = "the story was superb and the cast was there"
    col = list(clf.labels).index("positive")
    ig = build_word_importance({"@importance": "integrated-gradients", "steps": 200, "stopwords": True})
    (s,) = ig.explain(clf, [text], [col])
    vec, W, b = clf.linear_model()
    p1 = softmax(vec.transform([text]) @ W.T + b, axis=1)[0, col]
    assert s.scores.sum() == pytest.approx(p1 - softmax(b)[col], abs=1e-3)


def test_lime_and_shapley_need_only_predict_proba():
    class Keyword:
        labels = ("negative", "positive")
        name = "keyword"

        def predict_proba(self, texts):
            return np.array([[0.1, 0.9] if "nice" in t.split() else [0.9, 0.1] for t in texts])

    for method in ("lime", "shapley"):
        (s,) = build_word_importance(method).explain(Keyword(), ["a nice little film"], [1])
        assert s.top(1) == ["nice"]
    with pytest.raises(ConfigError, match="integrated gradients needs a model with gradients"):
        build_word_importance("integrated-gradients").explain(Keyword(), ["a nice film"], [1])


def test_registered_with_versions():
    assert {"lime.v1", "integrated-gradients.v1", "shapley.v1"} <= {e.name for e in WORD_IMPORTANCE.entries()}
    assert build_word_importance({"@importance": "lime", "samples": 50}).config.samples == 50


def test_lime_explains_a_text_the_same_way_whatever_its_batch(models):
    """A text's explanation depends on the text and the seed, not on its place in a batch."""
    lime = build_word_importance({"@importance": "lime", "samples": 40})
    model = models["tfidf-logreg"]
    texts = ["the film was great and the cast was there", "the story was dull and the music was there"]
    alone = lime.explain(model, texts[1:], [0])[0]
    second = lime.explain(model, texts, [1, 0])[1]
    assert alone.words == second.words and np.array_equal(alone.scores, second.scores)
    other_seed = lime.explain(model, texts[1:], [0], seed=1)[0]
    assert not np.array_equal(alone.scores, other_seed.scores)
