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
