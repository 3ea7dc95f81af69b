"""The shipped followers table: which particles, complements, objects and clause ends review text puts after
verbs and adjectives."""

from cfaug.nlp.followers import END, FOLLOWERS, OBJECT, fits, share, slot, takes


def test_table_knows_common_phrasal_verbs_and_complements():
    assert takes("ripped", "VERB", "off") and takes("laughing", "VERB", "out") and takes("proud", "ADJ", "of")
    assert takes("loved", "VERB", "into") is False and takes("glad", "ADJ", "of") is False


def test_words_and_followers_the_table_cannot_judge():
    assert takes("great", "ADJ", "in") is None  # "in" begins adjuncts after any adjective
    assert takes("zzyzx", "VERB", "up") is None  # never seen
    assert takes("great", "NOUN", "of") is None  # class not covered
    assert takes("creepy", "ADJ", "this") is None  # "how creepy this guy is": a clause, not an object
    assert "in" not in FOLLOWERS["ADJ"] and "off" in FOLLOWERS["VERB"]


def test_slots_group_objects_and_clause_ends():
    assert slot("The", "VERB") == slot("him", "VERB") == OBJECT
    assert slot("</s>", "VERB") == slot(",", "ADJ") == END
    assert slot("off", "VERB") == "off" and slot("film", "VERB") is None


def test_share_is_a_rate():
    rate = share("tired", "ADJ", "of")
    assert rate is not None and 0.05 < rate < 1.0
    assert share("love", "VERB", "into") == 0.0


def test_fits_compares_the_replacement_with_the_replaced_word():
    assert fits("devoid", "worthy", "ADJ", "of") and not fits("tired", "clean", "ADJ", "of")
    assert not fits("ripped", "loved", "VERB", "off") and not fits("ripped", "loved", "VERB", "into")
    assert fits("ripped", "zzyzx", "VERB", "off")  # the table cannot judge the replacement
    assert fits("beautiful", "awful", "ADJ", "in")
    assert not fits("sucked", "enjoyed", "VERB", ".") and fits("loved", "hated", "VERB", "it")


def test_on_after_a_verb_of_continuing_is_a_particle():
    from cfaug.nlp.followers import fits

    assert fits("drags", "rewards", "VERB", "on") is False  # "it just drags on and on"
    assert fits("drags", "moves", "VERB", "on") is True
    assert fits("relies", "draws", "VERB", "on") is True  # "on" after any other verb is not judged by name
