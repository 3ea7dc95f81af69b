"""The bundled English pipeline: loads from the package with no network, tags and parses real sentences."""

import socket

import pytest

from cfaug.nlp import BUNDLED, PipelineError, bundled_path, describe_pipeline, load_pipeline, parse


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the pipeline tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_bundled_pipeline_is_shipped_with_its_license():
    path = bundled_path()
    assert (path / "meta.json").is_file() and (path / "config.cfg").is_file()
    assert "CC BY-SA 4.0" in (path / "LICENSE.md").read_text()


def test_tags_and_parses_a_review_sentence():
    nlp = load_pipeline()
    doc = nlp("The food was cold and the waiter never smiled.")
    by_text = {t.text: t for t in doc}
    assert by_text["food"].pos_ == "NOUN" and by_text["food"].dep_ == "nsubj"
    assert by_text["cold"].pos_ == "ADJ"
    assert by_text["smiled"].tag_ == "VBD" and by_text["smiled"].dep_ == "conj"
    assert by_text["never"].head.text == "smiled" and by_text["was"].dep_ == "cop"
    doc = nlp("The batteries died after two weeks.")
    assert [t.lemma_ for t in doc][:3] == ["the", "battery", "die"]
    assert {t.text: t.dep_ for t in doc}["weeks"] == "obl"


def test_negation_is_attached_to_its_predicate():
    doc = load_pipeline()("This movie is not worth your time.")
    neg = next(t for t in doc if t.text == "not")
    assert neg.head.text in {"worth", "is"}


def test_loaded_once_per_process_and_described():
    assert load_pipeline() is load_pipeline(BUNDLED)
    facts = describe_pipeline(load_pipeline())
    assert facts["name"] == BUNDLED and "parser" in facts["components"]


def test_exclude_drops_components():
    nlp = load_pipeline(exclude=("lemmatizer",))
    assert "lemmatizer" not in nlp.pipe_names and "parser" in nlp.pipe_names


def test_parse_batches_in_order():
    docs = list(parse(["Great phone.", "The battery died after a week."], batch_size=1))
    assert [d.text for d in docs] == ["Great phone.", "The battery died after a week."]


def test_unknown_pipeline_name_is_a_clear_error():
    with pytest.raises(PipelineError, match="never downloads"):
        load_pipeline("en_core_web_nonexistent")


def test_folder_that_is_not_a_pipeline(tmp_path):
    with pytest.raises(PipelineError, match="not a spaCy pipeline folder"):
        load_pipeline(str(tmp_path))


def test_another_pipeline_by_folder(tmp_path):
    load_pipeline().to_disk(tmp_path / "copy")
    other = load_pipeline(str(tmp_path / "copy"))
    assert other is not load_pipeline() and [t.pos_ for t in other("Great phone.")][0] in {"ADJ", "PROPN"}
