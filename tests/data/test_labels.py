import pytest

from cfaug.data.io import read_dataset
from cfaug.data.labels import NLI_ALIASES, NLI_CODINGS, SENTIMENT_ALIASES, SENTIMENT_CODINGS, LabelError, LabelSpace
from cfaug.data.tasks import make_task


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
    sentiment.read("Positive")
    sentiment.read("pos")
    assert sentiment.surface("positive") == "Positive"
    assert sentiment.surface("negative") == "Negative"  # never seen: spelled like the label seen


def test_looking_a_spelling_up_does_not_change_the_inputs_spelling(sentiment):
    assert sentiment.canonical("POSITIVE") == "positive"  # e.g. a target, looked up before the input is read
    assert sentiment.read("Positive") == "positive"
    assert sentiment.surface("positive") == "Positive"


@pytest.mark.parametrize("target", ["positive", "pos", "1", "POSITIVE", "Positive"])
def test_a_target_is_spelled_as_the_input_spells_its_label(sentiment_tsv, target):
    task = make_task("sentiment", target=target)
    data = read_dataset(sentiment_tsv, task)
    negative = next(r for r in data.records if r.label == "negative")
    assert [task.label_space.surface(t) for t in task.targets(negative)] == ["Positive"]


@pytest.mark.parametrize("seen,label,spelled", [
    (["Negative"], "positive", "Positive"),
    (["NEGATIVE"], "positive", "POSITIVE"),
    (["negative"], "positive", "positive"),
    (["0"], "positive", "1"),                       # the 0/1 coding
    (["-1"], "positive", "1"),                      # the -1/1 coding
    (["1"], "negative", "negative"),                # 0/1 or -1/1: no way to tell
    (["neg"], "positive", "positive"),              # an abbreviation: no way to tell its counterpart
])
def test_a_label_the_input_never_names_is_spelled_like_its_other_labels(seen, label, spelled):
    space = LabelSpace(("negative", "positive"), SENTIMENT_ALIASES, SENTIMENT_CODINGS)
    for raw in seen:
        space.read(raw)
    assert space.surface(label) == spelled


def test_an_nli_relation_the_input_never_names_follows_its_coding():
    nli = LabelSpace(("entailment", "neutral", "contradiction"), NLI_ALIASES, NLI_CODINGS)
    nli.read("0")
    nli.read("2")
    assert nli.surface("neutral") == "1"


@pytest.mark.parametrize("target", ["neutral", "Positiv"])
def test_a_target_that_is_no_label_names_the_labels_the_input_has(sentiment_tsv, target):
    task = make_task("sentiment", target=target, check_target=False)
    data = read_dataset(sentiment_tsv, task)
    with pytest.raises(LabelError) as err:
        task.check_target(data.records, "reviews.tsv")
    assert str(err.value) == f"target {target!r} is not a label of reviews.tsv; its labels are Negative, Positive"


def test_a_target_the_input_lacks_is_a_label_of_the_task(tmp_path):
    f = tmp_path / "negative.tsv"
    f.write_text("text\tlabel\nA dull film.\tNegative\n", encoding="utf-8")
    task = make_task("sentiment", target="pos", check_target=False)
    data = read_dataset(f, task)
    task.check_target(data.records, str(f))  # the input has no positive row, but positive is a sentiment label
    assert task.label_space.surface(task.targets(data.records[0])[0]) == "Positive"
    bad = make_task("sentiment", target="neutral", check_target=False)
    with pytest.raises(LabelError) as err:
        bad.check_target(read_dataset(f, bad).records, "negative.tsv")
    assert str(err.value) == ("target 'neutral' is not a label of negative.tsv; its labels are Negative "
                              "(and the sentiment task's: negative, positive)")
    with pytest.raises(LabelError) as err:
        bad.check_target([], "empty.tsv")  # every row rejected: only the task's labels to name
    assert str(err.value) == "target 'neutral' is not a label of the sentiment task (negative, positive)"


def test_nli_aliases_follow_the_snli_numbering():
    nli = LabelSpace(("entailment", "neutral", "contradiction"), NLI_ALIASES)
    assert [nli.canonical(x) for x in ("0", "1", "2")] == ["entailment", "neutral", "contradiction"]
    assert nli.canonical("Contradicts") == "contradiction"


def test_aliases_to_labels_outside_the_space_are_ignored():
    space = LabelSpace(("yes", "no"), {"y": "yes", "maybe": "unsure"})
    assert space.canonical("Y") == "yes"
    with pytest.raises(LabelError):
        space.canonical("maybe")
