import pytest

from cfaug.editing.text import Edit, apply_edits, match_case, sentence_spans, tokenize


def words(text):
    return [t.text for t in tokenize(text)]


def test_tokens_carry_exact_character_spans():
    text = "I won't watch it. It isn't good!"
    toks = tokenize(text)
    assert [t.text for t in toks] == ["I", "wo", "n't", "watch", "it", ".", "It", "is", "n't", "good", "!"]
    assert all(text[t.start:t.end] == t.text for t in toks)
    assert [t.sentence for t in toks] == [0] * 6 + [1] * 5
    assert [t.is_word for t in toks][:6] == [True, True, True, True, True, False]


@pytest.mark.parametrize("text,expected", [
    ("A well-made, can't-miss film", ["A", "well-made", ",", "can't-miss", "film"]),
    ("Don't.", ["Do", "n't", "."]),
    ("It's 10/10", ["It's", "10", "/", "10"]),
])
def test_contractions_and_hyphens(text, expected):
    assert words(text) == expected


@pytest.mark.parametrize("text", ['He said "great." Then he left.', "(Superb!) Really.", "One.  Two?! Three", ""])
def test_every_visible_character_is_in_some_token(text):
    covered = {i for t in tokenize(text) for i in range(t.start, t.end)}
    assert covered == {i for i, ch in enumerate(text) if not ch.isspace()}


def test_sentences_split_at_final_punctuation_and_html_breaks():
    text = 'He said "great." Then he left.<br /><br />Bad ending'
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ['He said "great."', "Then he left.", "Bad ending"]
    assert sentence_spans("no end") == [(0, 6)]


def test_replacement_keeps_everything_else():
    text = "A great film, truly great."
    assert apply_edits(text, [Edit(2, 7, "dull", "great", "replace"), Edit(20, 25, "dull", "great", "replace")]) == \
        "A dull film, truly dull."


@pytest.mark.parametrize("text,span,expected", [
    ("It was a great film.", (9, 14), "It was a film."),            # one neighbouring space goes too
    ("Terrible acting, but a good plot.", (0, 8), "Acting, but a good plot."),  # capital handed over
    ("It is not good, really.", (6, 9), "It is good, really."),
    ("Good.", (0, 4), "."),
    ("Stupid, dull and ugly.", (0, 6), "Dull and ugly."),          # the orphaned comma goes too
    ("Fine. Stupid, dull and ugly.", (6, 12), "Fine. Dull and ugly."),
    ('"Great fun," he said.', (1, 6), '"Fun," he said.'),
    ("And Great Expectations was long.", (4, 9), "And Expectations was long."),  # mid-sentence: no capital
])
def test_deletion(text, span, expected):
    s, e = span
    assert apply_edits(text, [Edit(s, e, "", text[s:e], "remove")]) == expected


def test_overlapping_edits_keep_the_first():
    assert apply_edits("Good film.", [Edit(0, 4, "Bad", "Good", "replace"), Edit(0, 4, "Poor", "Good", "replace")]) == \
        "Bad film."


def test_edit_json():
    assert Edit(1, 3, "x", "ab", "replace").to_json() == {"start": 1, "end": 3, "old": "ab", "new": "x", "kind": "replace"}


@pytest.mark.parametrize("template,word,expected", [("GREAT", "awful", "AWFUL"), ("Great", "awful", "Awful"),
                                                    ("great", "awful", "awful"), ("I", "me", "Me")])
def test_match_case(template, word, expected):
    assert match_case(template, word) == expected
