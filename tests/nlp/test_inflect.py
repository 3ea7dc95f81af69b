import pytest

from cfaug.nlp.inflect import can_be, indefinite_article, inflect, lemmas, match_case, plausible_tag, reinflect


@pytest.mark.parametrize("word,upos,tag,expected", [
    ("hate", "VERB", "VBD", "hated"),
    ("hates", "VERB", "VBG", "hating"),
    ("bad", "ADJ", "JJS", "worst"),
    ("good", "ADJ", "JJR", "better"),
    ("disaster", "NOUN", "NNS", "disasters"),
    ("Awful", "ADJ", "JJ", "Awful"),
    ("BORING", "ADJ", "JJ", "BORING"),
])
def test_reinflect_keeps_part_of_speech_and_form(word, upos, tag, expected):
    assert reinflect(word, upos, tag) == expected


def test_reinflect_refuses_another_part_of_speech():
    assert reinflect("terrible", "NOUN", "NN") is None      # an adjective for a noun
    assert reinflect("masterpiece", "ADJ", "JJ") is None    # a noun for an adjective
    assert reinflect("heaven", "VERB", "VBN") is None       # "committed heaven"


def test_closed_class_words_pass_through():
    assert reinflect("not", "PART", "RB") == "not"


def test_lemmas_and_inflect():
    assert lemmas("loved") == {"VERB": ("love",)}
    assert can_be("boring", "ADJ") and can_be("boring", "VERB") and not can_be("boring", "NOUN")
    assert inflect("hate", "VBZ") == "hates"


@pytest.mark.parametrize("word,article", [
    ("awful", "an"), ("great", "a"), ("hour", "an"), ("honest", "an"), ("unique", "a"), ("one-time", "a"),
    ("8", "an"), ("9", "a"), ("11/10", "an"), ("European", "a"), ("'excellent'", "an"), ("", "a"),
])
def test_indefinite_article(word, article):
    assert indefinite_article(word) == article


def test_match_case():
    assert match_case("Loved", "hated") == "Hated" and match_case("LOVED", "hated") == "HATED"


@pytest.mark.parametrize("word,tag,expected", [
    ("stunning", "NN", "JJ"),      # cannot be a noun: an adjective
    ("loved", "NN", "VBN"),        # nor an adjective: a participle
    ("beckons", "NNS", "VBZ"),     # a verb in the form the word has ("Hollywood beckons/NNS")
    ("ran", "NN", "VBD"),
    ("awesome", "VBP", "JJ"),
    ("pain", "JJ", "NN"),
    ("movies", "JJ", "NNS"),
    ("bored", "JJ", "JJ"),         # adjectival participles stay adjectives
    ("film", "NN", "NN"),          # a tag the word can have stays
    ("acting", "NN", "NN"),
    ("zorbly", "NN", "NN"),        # unknown to the dictionary
    ("the", "DT", "DT"),           # closed class
])
def test_plausible_tag_mends_a_class_the_word_cannot_have(word, tag, expected):
    assert plausible_tag(word, tag) == expected


def test_usual_share_says_which_classes_readers_meet():
    from cfaug.nlp.inflect import can_be, usual_share, usually

    assert can_be("quiet", "NOUN") and not usually("quiet", "NOUN")  # listed as a noun, used as an adjective
    assert usually("quiet", "ADJ") and usually("win", "VERB") and usually("fun", "ADJ")
    assert usual_share("hate", "VERB") > 0.9 and usual_share("gem", "NOUN") == 1.0
    assert usual_share("zorbly", "NOUN") is None and not usually("zorbly", "NOUN")  # unknown: the dictionary
    assert usual_share("killer", "AUX") == usual_share("killer", "VERB")


def test_attested_forms():
    from cfaug.nlp.inflect import attested

    assert attested("hate", "hated", "VERB", "VBD") and attested("gem", "gem", "NOUN", "NN")
    assert not attested("quiet", "quiet", "NOUN", "NN") and not attested("safe", "safes", "NOUN", "NNS")
    assert attested("annoying", "annoying", "VERB", "VBG")  # an adjective that is a participle
    assert not attested("clean", "cleaned", "VERB", "VBN")  # an adjective made into a verb form
    assert not attested("safe", "safed", "VERB", "VBN")  # never seen


def test_tags_in_context_mend_adjectives_read_as_nouns_and_leave_real_nouns():
    from cfaug.nlp.inflect import tags_in_context

    assert tags_in_context(["this", "brilliant", "look"], ["DT", "NN", "VB"]) == ["DT", "JJ", "VB"]
    assert tags_in_context(["a", "tender", "and", "eccentric", "man"], ["DT", "NN", "CC", "JJ", "NN"])[1] == "JJ"
    # nouns stay nouns: a word readers meet as a noun, and a noun not coordinated with an adjective
    assert tags_in_context(["a", "mess", ",", "sadly"], ["DT", "NN", ",", "RB"])[1] == "NN"
    assert tags_in_context(["the", "horror", ",", "scary", "stuff"], ["DT", "NN", ",", "JJ", "NN"])[1] == "NN"
    assert tags_in_context(["a", "tender", "for", "the", "job"], ["DT", "NN", "IN", "DT", "NN"])[1] == "NN"


def test_attested_comparatives_and_superlatives():
    from cfaug.nlp.inflect import attested

    assert attested("hilarious", "hilariouser", "ADJ", "JJR") is False  # a suffix form no review writes
    assert attested("boring", "boringest", "ADJ", "JJS") is False
    assert attested("nice", "nicer", "ADJ", "JJR") is True
    assert attested("tasty", "tastiest", "ADJ", "JJS") is True
    assert attested("good", "better", "ADJ", "JJR") is True  # an irregular form the table has seen
    assert attested("hilarious", "hilarious", "ADJ", "JJ") is True  # the plain adjective is fine
