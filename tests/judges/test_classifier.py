import numpy as np
import pytest

from cfaug.judges.classifier import HFClassifierJudge, predict_labels
from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
from cfaug.data.inputs import as_text

TEXTS = ["a great film", "a wonderful film", "great acting", "wonderful story",
         "a terrible film", "an awful film", "terrible acting", "awful story"]
LABELS = ["positive"] * 4 + ["negative"] * 4


@pytest.mark.parametrize("model", ["logreg", "svm"])
def test_tfidf_judge_learns_the_opinion_words(model):
    judge = TfidfLinearJudge(model=model).fit(TEXTS, LABELS)
    assert judge.labels == ("negative", "positive") and judge.name == f"tfidf-{model}"
    assert predict_labels(judge, ["great story", "awful acting"]) == ["positive", "negative"]
    probs = judge.predict_proba(["great story", "awful acting"])
    assert probs.shape == (2, 2) and np.allclose(probs.sum(axis=1), 1.0)
    assert judge.predict_proba([]).shape == (0, 2)


def test_tfidf_judge_is_deterministic_and_describes_its_training_data():
    a = TfidfLinearJudge(seed=3).fit(TEXTS, LABELS)
    b = TfidfLinearJudge(seed=3).fit(TEXTS, LABELS)
    assert np.array_equal(a.predict_proba(TEXTS), b.predict_proba(TEXTS))
    assert a.describe() == b.describe()
    c = TfidfLinearJudge(seed=3).fit(TEXTS[:-1] + ["awful plot"], LABELS)
    assert c.describe()["train_sha256"] != a.describe()["train_sha256"]


def test_tfidf_judge_save_and_load(tmp_path):
    judge = TfidfLinearJudge().fit(TEXTS, LABELS)
    judge.save(tmp_path / "j.pkl")
    back = TfidfLinearJudge.load(tmp_path / "j.pkl")
    assert np.array_equal(back.predict_proba(TEXTS), judge.predict_proba(TEXTS))


def test_tfidf_judge_errors():
    with pytest.raises(ValueError, match="'logreg' or 'svm'"):
        TfidfLinearJudge(model="forest")
    with pytest.raises(ValueError, match="two distinct labels"):
        TfidfLinearJudge().fit(TEXTS[:4], LABELS[:4])
    with pytest.raises(RuntimeError, match="before fit"):
        TfidfLinearJudge().predict_proba(["x"])


def test_pairs_are_joined_for_text_judges():
    assert as_text(("A dog runs.", "An animal moves.")) == "A dog runs. [SEP] An animal moves."


def test_hf_judge_by_local_path(tiny_classifier_dir):
    judge = HFClassifierJudge(tiny_classifier_dir, device="cpu", batch_size=2)
    assert judge.labels == ("negative", "positive") and judge.name == f"hf:{tiny_classifier_dir.name}"
    probs = judge.predict_proba(TEXTS[:5])
    assert probs.shape == (5, 2) and np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    batched = HFClassifierJudge(tiny_classifier_dir, device="cpu", batch_size=8).predict_proba(TEXTS[:5])
    assert np.allclose(probs, batched, atol=1e-5)  # padding does not change a text's score
    pairs = judge.predict_proba([("a great film", "terrible acting")])
    assert pairs.shape == (1, 2)
    assert judge.predict_proba([]).shape == (0, 2)
    d = judge.describe()
    assert d["labels"] == ["negative", "positive"] and len(d["config_sha256"]) == 16


def test_hf_judge_label_names(tmp_path, make_tiny_bert):
    unnamed = make_tiny_bert(tmp_path / "unnamed", "classifier", id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ValueError, match=r"has unnamed labels \['label_0', 'label_1'\]; pass labels="):
        HFClassifierJudge(unnamed, device="cpu")
    assert HFClassifierJudge(unnamed, labels=["negative", "positive"], device="cpu").labels == ("negative", "positive")
    with pytest.raises(ValueError, match="has 2 outputs but 3 labels were given"):
        HFClassifierJudge(unnamed, labels=["a", "b", "c"], device="cpu")
    upper = make_tiny_bert(tmp_path / "upper", "classifier", id2label={0: "NEGATIVE", 1: "POSITIVE"})
    assert HFClassifierJudge(upper, device="cpu").labels == ("negative", "positive")


def test_hf_judge_refuses_hub_names():
    from cfaug.local_models import ModelPathError

    with pytest.raises(ModelPathError, match="'bert-base-uncased' is not a local folder"):
        HFClassifierJudge("bert-base-uncased")


@pytest.mark.parametrize("model", ["logreg", "svm"])
def test_tfidf_judge_with_more_than_two_labels(model):
    texts = TEXTS + ["an average film", "an ordinary story", "average acting", "ordinary plot"]
    labels = ["5"] * 4 + ["1"] * 4 + ["3"] * 4
    judge = TfidfLinearJudge(model=model).fit(texts, labels)
    assert judge.labels == ("1", "3", "5")
    assert predict_labels(judge, ["great story", "awful plot", "average story"]) == ["5", "1", "3"]
    assert np.allclose(judge.predict_proba(texts).sum(axis=1), 1.0)
