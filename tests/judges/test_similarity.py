import pytest

from cfaug.judges import similarity
from cfaug.judges.similarity import levenshtein, token_edit_rate, tokenize


def test_tokenize_lowercases_and_splits_punctuation():
    assert tokenize("It isn't GREAT, is it?") == ["it", "isn't", "great", ",", "is", "it", "?"]


@pytest.mark.parametrize("a,b,d", [("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3), ("flaw", "lawn", 2),
                                   ("abcd", "acbd", 2)])
def test_levenshtein_by_hand(a, b, d, monkeypatch):
    assert levenshtein(list(a), list(b)) == d
    monkeypatch.setattr(similarity, "_fast_levenshtein", None)  # the pure-Python fallback agrees
    assert levenshtein(list(a), list(b)) == d
    assert levenshtein(list(b), list(a)) == d


def test_token_edit_rate():
    assert token_edit_rate("a great film .", "a great film .") == 0.0
    assert token_edit_rate("a great film .", "a terrible film .") == 0.25
    assert token_edit_rate("a great film .", "a film .") == 0.25
    assert token_edit_rate("A great film.", "An awful, awful movie!") == 1.5  # 4 swaps + 2 insertions over 4
    assert token_edit_rate("", "") == 0.0 and token_edit_rate("", "new") == 1.0


def test_sentence_encoder_cosine(sentence_encoder):
    a = ["The film was wonderful.", "The film was wonderful."]
    b = ["The film was wonderful.", "The movie was great."]
    same, close = sentence_encoder.cosine(a, b)
    far = sentence_encoder.cosine(["The film was wonderful."], ["Interest rates rose in March."])[0]
    assert same == pytest.approx(1.0, abs=1e-5)
    assert far < close < same
    assert sentence_encoder.encode(["x", "y"]).shape == (2, sentence_encoder.dimension) == (2, 384)
    assert sentence_encoder.encode([]).shape == (0, 384)
    with pytest.raises(ValueError, match="same length"):
        sentence_encoder.cosine(["a"], [])


def test_sentence_encoder_describes_itself(sentence_encoder, encoder_path):
    d = sentence_encoder.describe()
    assert d["encoder"] == str(encoder_path) and len(d["weights_sha256"]) == 16
    assert sentence_encoder.name == f"sentence-embedding:{encoder_path.name}"


def test_sentence_encoder_refuses_hub_names():
    from cfaug.judges.models import ModelPathError
    from cfaug.judges.similarity import SentenceEncoder

    with pytest.raises(ModelPathError, match="does not download"):
        SentenceEncoder("sentence-transformers/all-MiniLM-L6-v2")
