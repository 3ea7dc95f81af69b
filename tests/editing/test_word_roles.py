"""Words that are no opinion of their own where they stand: a degree adverb before an edited word ("incredibly
nice"), the noun of "to death", and the first word of a fixed compound ("happy hour")."""

import pytest

from cfaug.editing.text import tokenize
from cfaug.editing.word_roles import (degree_modifier, fits_idiom, graded_by_idiom, in_compound, intensifying_idiom,
                                     names_a_kind)


def index_of(tokens, word):
    return next(k for k, t in enumerate(tokens) if t.lower == word)


def tagged(text, **by_word):
    """The tokens of ``text`` and Penn tags by token start for the words named (``nice="JJ"``)."""
    tokens = tokenize(text)
    return tokens, {t.start: by_word[t.lower] for t in tokens if t.lower in by_word}


def test_a_degree_adverb_before_an_edited_word_is_a_modifier():
    tokens, tags = tagged("incredibly nice staff", incredibly="RB", nice="JJ", staff="NN")
    nice = index_of(tokens, "nice")
    assert degree_modifier(tokens, 0, tags, {nice}) is True
    assert degree_modifier(tokens, 0, tags, {nice, 0}) is True


def test_no_degree_modifier_unless_the_next_word_is_edited_and_tagged():
    tokens, tags = tagged("incredibly nice staff", incredibly="RB", nice="JJ", staff="NN")
    assert degree_modifier(tokens, 0, tags, set()) is False       # "nice" is not edited
    assert degree_modifier(tokens, 0, tags, {2}) is False         # another word is
    assert degree_modifier(tokens, 0, {}, {1}) is False           # untagged
    assert degree_modifier(tokens, 2, tags, {1}) is False         # the last token grades nothing
    # the next word must be gradable (an adjective, adverb or participle), the word itself an RB
    tokens, tags = tagged("incredibly staff", incredibly="RB", staff="NN")
    assert degree_modifier(tokens, 0, tags, {1}) is False
    tokens, tags = tagged("incredible nice staff", incredible="JJ", nice="JJ")
    assert degree_modifier(tokens, 0, tags, {1}) is False


def test_a_degree_adverb_does_not_grade_across_a_sentence_end():
    tokens, tags = tagged("really. Nice staff", really="RB", nice="JJ")
    assert tokens[1].text == "." and tokens[2].sentence != tokens[0].sentence
    assert degree_modifier(tokens, 0, tags, {1, 2}) is False


@pytest.mark.parametrize("tag", ["VBN", "JJ"])
def test_to_death_after_a_participle_or_adjective_is_an_idiom(tag):
    tokens, tags = tagged("I was bored to death .", bored=tag)
    assert intensifying_idiom(tokens, index_of(tokens, "death"), tags) is True


def test_to_death_after_an_object_pronoun_is_an_idiom_untagged():
    tokens = tokenize("I loved it to death")
    assert intensifying_idiom(tokens, index_of(tokens, "death"), {}) is True


def test_death_elsewhere_is_a_word():
    tokens = tokenize("the death of the hero")
    assert intensifying_idiom(tokens, index_of(tokens, "death"), {}) is False
    # untagged, "bored" is not known to grade anything; a noun before "to death" is no degree either
    tokens = tokenize("I was bored to death .")
    assert intensifying_idiom(tokens, index_of(tokens, "death"), {}) is False
    tokens, tags = tagged("he sentenced the man to death", man="NN")
    assert intensifying_idiom(tokens, index_of(tokens, "death"), tags) is False
    # only "death" is the idiom's noun
    tokens, tags = tagged("I was bored to tears", bored="VBN")
    assert intensifying_idiom(tokens, index_of(tokens, "tears"), tags) is False


def test_fixed_compounds():
    tokens = tokenize("awesome happy hour too !")
    assert in_compound(tokens, index_of(tokens, "happy")) is True
    assert in_compound(tokens, index_of(tokens, "awesome")) is False
    tokens = tokenize("Happy Hour")
    assert in_compound(tokens, 0) is True  # case-insensitive
    tokens = tokenize("thank you daniel for taking care of my car")
    assert in_compound(tokens, 0) is True  # a formula of thanks, not a verb to flip ("fool you daniel")
    tokens = tokenize("happy staff")
    assert in_compound(tokens, 0) is False
    tokens = tokenize("we were happy. Hour after hour")
    assert in_compound(tokens, index_of(tokens, "happy")) is False  # not across a sentence end
    tokens = tokenize("so happy")
    assert in_compound(tokens, 1) is False  # the last token


def test_a_feeling_graded_by_to_death_stays_a_participle():
    tokens = tokenize("I was bored to death . I was bored .")
    first, second = [i for i, t in enumerate(tokens) if t.lower == "bored"]
    assert graded_by_idiom(tokens, first) is True
    assert graded_by_idiom(tokens, second) is False
    assert graded_by_idiom(tokenize("bored to tears"), 0) is False
    assert fits_idiom("excited") and fits_idiom("Thrilled") and not fits_idiom("fun")


def test_a_short_quotation_is_a_title():
    from cfaug.editing.word_roles import in_name, in_short_quote

    tokens = tokenize('Check out Wikipedia for "dark area". Unfortunately "dark area" has fans.')
    darks = [i for i, t in enumerate(tokens) if t.lower == "dark"]
    assert len(darks) == 2 and all(in_short_quote(tokens, i) and in_name(tokens, i, {}) for i in darks)
    tokens = tokenize('He said "this is a dark and boring film" twice. A dark "film".')
    first, second = [i for i, t in enumerate(tokens) if t.lower == "dark"]
    assert in_short_quote(tokens, first) is False  # a quoted sentence: an opinion
    assert in_short_quote(tokens, second) is False  # outside the quotation marks
    assert in_short_quote(tokenize("a dark film"), 1) is False


@pytest.mark.parametrize("text,word,tags,expected", [
    ("the most unlikely of love stories", "love", {"love": "NN", "stories": "NNS"}, True),   # modifies a noun
    ("India's freedom struggle ignored him", "freedom", {"freedom": "NN", "struggle": "NN"}, True),
    ("its a crap movie", "crap", {"crap": "NN", "movie": "NN"}, True),
    ("she falls in love with him", "love", {"love": "NN", "with": "IN"}, True),              # the story's love
    ("they make love in the sand", "love", {"love": "NN", "in": "IN"}, True),
    ("my love for this film", "love", {"love": "NN", "for": "IN"}, False),                     # the writer's
    ("I love the movie", "love", {"love": "VBP", "the": "DT"}, False),                         # a verb
    ("a fun time", "fun", {"fun": "NN", "time": "NN"}, False),       # usually an adjective, whatever the tag
    ("What a shame .", "shame", {"shame": "NN"}, False),                                      # nothing follows
    ("the love story", "love", {"love": "NNP", "story": "NN"}, False),                         # a name's word
    ("the love", "love", {}, False),                                                           # untagged
])
def test_a_noun_that_names_a_kind_of_thing_is_no_opinion(text, word, tags, expected):
    tokens = tokenize(text)
    by_start = {t.start: tags[t.lower] for t in tokens if t.lower in tags}
    assert names_a_kind(tokens, index_of(tokens, word), by_start) is expected


def test_shame_on_someone_is_a_formula():
    tokens = tokenize("Shame on you, Robert! What a shame.")
    assert in_compound(tokens, 0) is True                       # "Shame on you": never "Joy on you"
    assert in_compound(tokens, index_of(tokens, "a") + 1) is False  # "What a shame" flips ("What a joy")


def test_a_films_bad_guy_is_a_role():
    tokens = tokenize("He plays a bad guy again. The staff are good guys.")
    assert in_compound(tokens, index_of(tokens, "bad")) is True    # never "a good guy": a villain still
    assert in_compound(tokens, index_of(tokens, "good")) is False  # praise of the staff, which flips
