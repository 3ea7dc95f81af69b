"""Output parsers: revised text, label, triples."""

from __future__ import annotations

import pytest

from cfaug.llm import ParseError, get_parser

revised = get_parser("revised_text")
label = get_parser("label")
triples = get_parser("triples")


@pytest.mark.parametrize("answer, expected", [
    ("<revised>A dull film.</revised>", "A dull film."),
    ("Sure! Here it is:\n<revised>\n  A dull film.\n</revised>\nI changed one word.", "A dull film."),
    ("Reply between <revised> and </revised>.\n<revised>A dull film.</revised>", "A dull film."),
    ("<revised>\"A dull film.\"</revised>", "A dull film."),
    ("<REVISED>A dull film.</REVISED>", "A dull film."),
    ("<revised>A dull film that runs out", "A dull film that runs out"),  # cut off by max_tokens
    ("Revised sentence: A dull film.\n\nThis changes great to dull.", "A dull film."),
    ("**Revised Premise:** A cat sleeps.", "A cat sleeps."),
    ("[A dull film.]", "A dull film."),
    ("A dull film.", "A dull film."),
    ("<revised>Line one.\n\nLine two.</revised>", "Line one.\n\nLine two."),
])
def test_revised_text_accepts_common_shapes(answer, expected):
    assert revised(answer) == expected


@pytest.mark.parametrize("answer, reason", [
    ("", "empty"),
    ("<revised></revised>", "empty"),
    ("Sure, I can help with that. What would you like?", "commentary"),
    ("Here is the revised text with a more negative tone.", "commentary"),
])
def test_revised_text_rejects_what_is_not_a_text(answer, reason):
    with pytest.raises(ParseError, match=reason):
        revised(answer)


def test_revised_text_custom_tag_and_reminder():
    assert revised("<premise>A man naps.</premise>", tag="premise") == "A man naps."
    assert "<premise>" in revised.reminder(tag="premise")


LABELS = ["entailment", "neutral", "contradiction"]


@pytest.mark.parametrize("answer, expected", [
    ("contradiction", "contradiction"),
    ("Contradiction.", "contradiction"),
    ("<label>neutral</label>", "neutral"),
    ("The relation is entailment because the premise says so.", "entailment"),
    ("c", "contradiction"),
])
def test_label(answer, expected):
    assert label(answer, labels=LABELS, aliases={"c": "contradiction"}) == expected


def test_label_refuses_to_guess():
    with pytest.raises(ParseError, match="several labels"):
        label("Either entailment or neutral.", labels=LABELS)
    with pytest.raises(ParseError, match="no label"):
        label("I cannot tell.", labels=LABELS)
    assert "entailment, neutral, contradiction" in label.reminder(labels=LABELS)


@pytest.mark.parametrize("answer", [
    '[["service", "slow", "NEG"], ["food", "great", "positive"]]',
    "```json\n[{\"aspect\": \"service\", \"opinion\": \"slow\", \"sentiment\": \"neg\"},"
    " {\"aspect\": \"food\", \"opinion\": \"great\", \"sentiment\": \"POS\"}]\n```",
    "[('service', 'slow', 'NEG'), ('food', 'great', 'POS')]",
    "Triples:\n(service, slow, NEG)\n(food, great, POS)",
])
def test_triples(answer):
    assert triples(answer) == [("service", "slow", "negative"), ("food", "great", "positive")]


def test_triples_empty_and_errors():
    assert triples("[]") == []
    with pytest.raises(ParseError, match="unknown sentiment"):
        triples('[["a", "b", "meh"]]')
    with pytest.raises(ParseError, match="3 parts"):
        triples("(a, b)")
    with pytest.raises(ParseError, match="no list of triples"):
        triples("nothing here")
