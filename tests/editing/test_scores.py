import pytest

from cfaug.editing.scores import score_edits
from cfaug.editing.text import apply_edits


def mirrored(text, target):
    return apply_edits(text, score_edits(text, target))


@pytest.mark.parametrize("text,target,expected", [
    ("Overall 8/10.", "negative", "Overall 3/10."),
    ("I'd say 9 / 10", "negative", "I'd say 2 / 10"),
    ("Four out of five.", "negative", "Two out of five."),
    ("ten out of ten", "negative", "one out of ten"),
    ("3/10, avoid.", "positive", "8/10, avoid."),
    ("0/10", "positive", "10/10"),
    ("4 stars, easily.", "negative", "2 stars, easily."),
    ("1 star for the sound.", "positive", "5 stars for the sound."),
    ("A 4-star film.", "negative", "A 2-star film."),
    ("One star.", "positive", "Five stars."),
    ("I give it a 9.", "negative", "I give it a 2."),
    ("Rated it an 8.", "negative", "Rated it a 3."),
    ("I gave this film a 2.", "positive", "I gave this film a 9."),
    ("I gave it a 3.", "positive", "I gave it an 8."),
    ("Two thumbs up!", "negative", "Two thumbs down!"),
    ("Thumbs down.", "positive", "Thumbs up."),
])
def test_ratings_are_mirrored_in_every_common_form(text, target, expected):
    assert mirrored(text, target) == expected


@pytest.mark.parametrize("text,target", [
    ("Overall 3/10.", "negative"),       # already on the target's side
    ("5/10", "negative"),                # the middle of the scale
    ("I saw it 2 times out of 5 showings.", "positive"),
    ("12/10 would watch again", "negative"),  # off the scale
    ("It was released in 1999.", "negative"),
])
def test_ratings_on_the_right_side_or_not_ratings_stay(text, target):
    assert score_edits(text, target) == []


def test_no_polarity_no_edit():
    assert score_edits("8/10", None) == []


@pytest.mark.parametrize("text,target", [
    ("one star because you have to provide a rating .", "positive"),
    ("If I could give zero stars I would.", "positive"),
    ("I would give it 1 star only because I have to.", "positive"),
    ("The lowest score I could give is 1 star.", "positive"),
])
def test_a_rating_its_sentence_calls_forced_stays(text, target):
    assert score_edits(text, target) == []


@pytest.mark.parametrize("text,target,expected", [
    ("I give it 2 stars. The food was bad.", "positive", "I give it 4 stars. The food was bad."),
    ("Great place, 5 stars!", "negative", "Great place, 1 star!"),
    # only the forced rating's own sentence keeps its rating
    ("Forced to give 1 star. Bad. 2/10", "positive", "Forced to give 1 star. Bad. 9/10"),
])
def test_ratings_outside_a_forced_sentence_are_mirrored(text, target, expected):
    assert mirrored(text, target) == expected


def test_the_mirrored_star_rating_edit():
    [edit] = score_edits("I give it 2 stars. The food was bad.", "positive")
    assert (edit.start, edit.end, edit.old, edit.new, edit.kind) == (10, 17, "2 stars", "4 stars", "replace")
