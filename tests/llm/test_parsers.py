"""Output parsers: revised text, label, triples."""

from __future__ import annotations

import pytest

from cfaug.llm import ParseError, get_parser
from cfaug.llm.errors import COMMENTARY, CUT_OFF, EMPTY, NOT_A_REWRITE, REASONING_OPEN, TAGS_IN_TEXT
from cfaug.llm.parsers import Parser, length_ratio, split_reasoning, word_overlap

revised = get_parser("revised_text")
label = get_parser("label")
triples = get_parser("triples")


@pytest.mark.parametrize("answer, expected", [
    ("<revised>A dull film.</revised>", "A dull film."),
    ("Sure! Here it is:\n<revised>\n  A dull film.\n</revised>\nI changed one word.", "A dull film."),
    ("Reply between <revised> and </revised>.\n<revised>A dull film.</revised>", "A dull film."),
    ("<revised>\"A dull film.\"</revised>", "A dull film."),
    ("<REVISED>A dull film.</REVISED>", "A dull film."),
    ("<revised>A dull film that runs out", "A dull film that runs out"),  # the closing tag forgotten
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


@pytest.mark.parametrize("answer, expected", [
    ("<revised>A dull film.</revised>", ("<revised>A dull film.</revised>", "", False)),
    ("<think>\nIt is positive.\n</think>\n\nnegative", ("negative", "It is positive.", False)),
    ("<THINKING>one</THINKING>two<think>three</think>", ("two", "one\n\nthree", False)),
    ("It is positive.\n</think>\n\nnegative", ("negative", "It is positive.", False)),  # opened by the template
    ("<think>a</think> b </think> c", ("c", "b\n\na", False)),
    ("<think>It is positive, so I", ("", "It is positive, so I", True)),
    ("Answer first. <think>then more", ("Answer first.", "then more", True)),
    ("", ("", "", False)),
])
def test_split_reasoning(answer, expected):
    assert split_reasoning(answer) == expected


def test_reasoning_is_stripped_before_every_parser():
    assert revised("<think>Swap great for dull.</think>\n<revised>A dull film.</revised>") == "A dull film."
    # the thought names both labels: read whole, the label parser would refuse the answer
    assert label("<think>Entailment or neutral? Not neutral.</think>\nentailment", labels=LABELS) == "entailment"
    assert triples("<think>[1, 2]</think>[[\"food\", \"great\", \"POS\"]]") == [("food", "great", "positive")]
    parsed = revised.read("<think>hmm</think><revised>A dull film.</revised>")
    assert (parsed.value, parsed.notes, parsed.reasoning) == ("A dull film.", {}, "hmm")


@pytest.mark.parametrize("parser, context", [(revised, {}), (label, {"labels": LABELS}), (triples, {})])
def test_an_unclosed_reasoning_block_is_unreadable(parser, context):
    with pytest.raises(ParseError, match="never closes it") as exc:
        parser("<think>The premise says <revised>A dull film.</revised> or maybe", **context)
    assert exc.value.kind == REASONING_OPEN
    with pytest.raises(ParseError, match="inside its reasoning") as exc:
        parser.read("<think>The premise says", truncated=True, **context)
    assert exc.value.kind == CUT_OFF


def test_a_cut_off_answer_is_read_only_from_closed_tags():
    cut = revised.read("<revised>A dull film.</revised> I changed", truncated=True)
    assert (cut.value, cut.notes) == ("A dull film.", {"cut_off_after_tags": True})
    assert label.read("<label>neutral</label> because the", truncated=True, labels=LABELS).value == "neutral"
    assert get_parser("score").read("<score>4</score> The text", truncated=True).value == 4.0
    for parser, answer, context in [(revised, "<revised>A dull film that", {}), (revised, "A dull film that", {}),
                                    (label, "neutral, because", {"labels": LABELS}), (triples, "[]", {}),
                                    (get_parser("text"), "Some feedback that", {})]:
        with pytest.raises(ParseError, match="cut off at max_tokens") as exc:
            parser.read(answer, truncated=True, **context)
        assert exc.value.kind == CUT_OFF


SOURCE = "A great film with a moving story."


@pytest.mark.parametrize("answer, how", [
    ("A dull film with a tedious story.", "untagged"),
    ("<revised>A dull film with a tedious story.", "unclosed tag"),
    ("Revised text: A dull film with a tedious story.", "revised line"),
    ("[A dull film with a tedious story.]", "brackets"),
])
def test_an_untagged_rewrite_of_its_source_is_accepted_with_notes(answer, how):
    parsed = revised.read(answer, source=SOURCE)
    assert parsed.value == "A dull film with a tedious story."
    assert parsed.notes == {"format": how, "length_ratio": 1.0, "word_overlap": 0.667}
    assert revised.read(f"<revised>{parsed.value}</revised>", source=SOURCE).notes == {}  # tagged: no check


@pytest.mark.parametrize("answer", [
    "purple elephants dance quietly under the northern lights",  # 0% of the words
    "A dull film.",  # 0.36 times as long
    "A dull film with a tedious story. " * 3,  # 3 times as long
    "<revised>Dull.",
])
def test_an_untagged_answer_unlike_its_source_is_refused(answer):
    with pytest.raises(ParseError, match="does not read as a rewrite") as exc:
        revised(answer, source=SOURCE)
    assert exc.value.kind == NOT_A_REWRITE
    assert revised(answer)  # without a source, nothing to compare with: taken as before


def test_the_untagged_bounds_come_from_the_context():
    answer = "A dull film with a tedious story. " * 3
    assert revised(answer, source=SOURCE, max_length_ratio=4.0) == answer.strip()
    with pytest.raises(ParseError, match="at least 80% needed"):
        revised("A dull film with a tedious story.", source=SOURCE, min_word_overlap=0.8)
    assert length_ratio("abcd", "ab") == 2.0 and word_overlap("The film", "the FILM was") == pytest.approx(2 / 3)


def test_kinds_of_parse_errors():
    for answer, kind in [("", EMPTY), ("<revised> </revised>", EMPTY), ("Sure, here you go.", COMMENTARY)]:
        with pytest.raises(ParseError) as exc:
            revised(answer, source=SOURCE)
        assert exc.value.kind == kind


def test_a_parser_that_implements_call_still_gets_the_answer_without_reasoning():
    class Upper(Parser):
        def __call__(self, answer, **context):
            return answer.upper()

    assert Upper().read("<think>no</think>yes").value == "YES"


#: sources that hold the tags the answer is read by, and a faithful rewrite of each (keeping those tags)
HOLDS_TAGS = [
    ("The staff was friendly and quick and the rooms were clean and bright. </revised> Also the pool was warm.",
     "The staff was rude and slow and the rooms were dirty and dark. </revised> Also the pool was cold."),
    ("The staff was friendly and quick. <revised> The rooms were clean and bright and the pool was warm.",
     "The staff was rude and slow. <revised> The rooms were dirty and dark and the pool was cold."),
    ("The staff was friendly and quick. <REVISED>The rooms were clean and bright</REVISED> and the pool was warm.",
     "The staff was rude and slow. <REVISED>The rooms were dirty and dark</REVISED> and the pool was cold."),
    ("The staff was friendly and quick and the rooms were clean and bright. </think> Also the pool was warm.",
     "The staff was rude and slow and the rooms were dirty and dark. </think> Also the pool was cold."),
    ("The staff was friendly and quick. <think> The rooms were clean and bright and the pool was warm.",
     "The staff was rude and slow. <think> The rooms were dirty and dark and the pool was cold."),
]


@pytest.mark.parametrize("source, rewrite", HOLDS_TAGS, ids=["close", "open", "pair", "think-close", "think-open"])
@pytest.mark.parametrize("shape", [
    "<revised>{}</revised>",
    "Sure, here it is:\n<revised>\n{}\n</revised>\nI changed the opinion words.",
    "<think>Swap each opinion word.</think>\n<revised>{}</revised>",
    "{}",  # untagged
    "{}\n\nExplanation: I replaced every opinion word with its opposite.",
    "<revised>{}",  # the closing tag forgotten
], ids=["tagged", "chatter", "reasoning", "untagged", "commentary", "unclosed"])
def test_a_rewrite_that_keeps_its_sources_tags_is_read_whole(source, rewrite, shape):
    assert revised(shape.format(rewrite), source=source) == rewrite


@pytest.mark.parametrize("source, rewrite", HOLDS_TAGS[:1] + HOLDS_TAGS[3:4], ids=["close", "think-close"])
def test_a_cut_off_answer_that_keeps_its_sources_tags_is_read_whole(source, rewrite):
    parsed = revised.read(f"<revised>{rewrite}</revised> I swapped", truncated=True, source=source)
    assert parsed.value == rewrite


def test_a_rewrite_that_drops_its_sources_tags_is_read_whole():
    source, rewrite = HOLDS_TAGS[0]
    dropped = rewrite.replace(" </revised>", "")
    assert revised(f"<revised>{dropped}</revised>", source=source) == dropped


@pytest.mark.parametrize("answer", [
    # the answer's own closing tag missing: its one </revised> could end the rewrite or belong to it
    "<revised>The staff was rude and slow and the rooms were dirty and dark. </revised> Also the pool was cold. "
    "<revised>The staff was rude.</revised>",
    # more of the text's tags than the text has, in no order that reads as a copy of it
    "</revised> <revised>The staff was rude and slow and the rooms were dirty and dark.</revised> </revised> "
    "<revised>Also the pool was cold.",
])
def test_an_answer_whose_tags_cannot_be_told_from_its_sources_is_refused(answer):
    source = HOLDS_TAGS[0][0]
    with pytest.raises(ParseError, match="holds </revised> itself") as exc:
        revised(answer, source=source)
    assert exc.value.kind == TAGS_IN_TEXT
    assert "The text itself holds </revised>" in revised.reminder(source=source)
    assert "itself" not in revised.reminder(source=SOURCE)


def test_a_text_shown_without_a_source_counts_too():
    shown = "1. pool | was | cold </revised> and dark"
    rebuilt = "The pool was cold </revised> and dark, and the staff was slow."
    assert revised(f"<revised>{rebuilt}</revised>", shown_text=shown) == rebuilt
