import pytest

from cfaug.data.labels import NLI_ALIASES, SENTIMENT_ALIASES, LabelError, LabelSpace


@pytest.fixture
def sentiment() -> LabelSpace:
    return LabelSpace(("negative", "positive"), SENTIMENT_ALIASES)


@pytest.mark.parametrize("raw", ["Positive", "positive", "POSITIVE", " pos ", "1", "1.0", 1, True, "+", "p"])
def test_spellings_of_positive(sentiment, raw):
    assert sentiment.canonical(raw) == "positive"


@pytest.mark.parametrize("raw", ["Negative", "neg", "0", 0, 0.0, False, "-1", "-", "n"])
def test_spellings_of_negative(sentiment, raw):
    assert sentiment.canonical(raw) == "negative"


@pytest.mark.parametrize("raw", [None, "", "  ", "nan", "None", "null"])
def test_missing_label(sentiment, raw):
    with pytest.raises(LabelError, match="missing label"):
        sentiment.canonical(raw)


def test_unknown_label_names_the_value_and_the_choices(sentiment):
    with pytest.raises(LabelError) as err:
        sentiment.canonical("mixed")
    assert str(err.value) == "unknown label 'mixed'; expected one of negative, positive"


def test_surface_keeps_the_first_spelling_seen(sentiment):
    sentiment.canonical("Positive")
    sentiment.canonical("pos")
    assert sentiment.surface("positive") == "Positive"
    assert sentiment.surface("negative") == "negative"  # never seen: canonical name


def test_nli_aliases_follow_the_snli_numbering():
    nli = LabelSpace(("entailment", "neutral", "contradiction"), NLI_ALIASES)
    assert [nli.canonical(x) for x in ("0", "1", "2")] == ["entailment", "neutral", "contradiction"]
    assert nli.canonical("Contradicts") == "contradiction"


def test_aliases_to_labels_outside_the_space_are_ignored():
    space = LabelSpace(("yes", "no"), {"y": "yes", "maybe": "unsure"})
    assert space.canonical("Y") == "yes"
    with pytest.raises(LabelError):
        space.canonical("maybe")
