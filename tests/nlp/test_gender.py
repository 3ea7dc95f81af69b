"""Gender word swapping with the bundled WinoBias / GN-GloVe lists."""

import pytest

from cfaug.nlp import load_pipeline
from cfaug.nlp.gender import NAME_PAIRS, gender_pairs, one_way_words, swap_gender, swap_tokens


@pytest.fixture(scope="module")
def tagger():
    return load_pipeline(only=("tok2vec", "tagger"))


def test_pronouns(tagger):
    text, swaps = swap_gender("He said she was right.", tagger)
    assert text == "She said he was right."
    assert swaps == [{"i": 0, "from": "He", "to": "She"}, {"i": 2, "from": "she", "to": "he"}]
    assert swap_gender("He thanked her for his book.", tagger)[0] == "She thanked him for her book."
    assert swap_gender("She hurt herself.", tagger)[0] == "He hurt himself."


def test_her_and_his_by_tag(tagger):
    assert swap_gender("I saw her with her sister.", tagger)[0] == "I saw him with his brother."
    assert swap_gender("The book is his and the pen is hers.", tagger)[0] == "The book is hers and the pen is his."
    assert swap_tokens(["her", "book"], ["PRP$", "NN"]) == ["his", "book"]
    assert swap_tokens(["saw", "her"], ["VBD", "PRP"]) == ["saw", "him"]
    assert swap_tokens(["is", "his"], ["VBZ", "PRP"]) == ["is", "hers"]
    assert swap_tokens(["his", "car"], ["PRP$", "NN"]) == ["her", "car"]
    assert swap_tokens(["his", "very", "own"], ["PRP$", "RB", "JJ"]) == ["her", "very", "own"]
    # a "his" tagged as a determiner that no noun phrase follows stands alone
    assert swap_tokens(["is", "his", "."], ["VBZ", "PRP$", "."]) == ["is", "hers", "."]


def test_case_is_kept():
    assert swap_tokens(["He", "HIS", "Actress", "WAITER"], ["PRP", "PRP$", "NN", "NN"]) == \
        ["She", "HER", "Actor", "WAITRESS"]


def test_spacing_and_punctuation_preserved(tagger):
    text = "My husband\tand  his brother-in-law (a waiter!) met Mr. Smith's wife..."
    out, swaps = swap_gender(text, tagger)
    assert out == "My wife\tand  her sister-in-law (a waitress!) met Mrs. Smith's husband..."
    assert {s["from"] for s in swaps} == {"husband", "his", "brother", "waiter", "Mr.", "wife"}
    doc = tagger(text)
    assert all(doc[s["i"]].text == s["from"] for s in swaps)


def test_words_inside_other_words_and_verbs_stay(tagger):
    text = "The heat in the shell was hotter than mother's. I miss her; a near miss."
    out, _ = swap_gender(text, tagger)
    assert out == "The heat in the shell was hotter than father's. I miss him; a near miss."
    assert swap_tokens(["the", "theme"], ["DT", "NN"]) == ["the", "theme"]


def test_titles(tagger):
    out, _ = swap_gender("Mr. Lee and Mrs. Park met Ms. Cho and Miss Hall.", tagger)
    assert out == "Mrs. Lee and Mr. Park met Mr. Cho and Mr Hall."      # a period is kept as written


def test_names_only_when_asked(tagger):
    text = "John gave Mary his phone."
    assert swap_gender(text, tagger)[0] == "John gave Mary her phone."
    assert swap_gender(text, tagger, names=True)[0] == "Patricia gave James her phone."
    assert "john" not in gender_pairs() and gender_pairs(names=True)["john"] == "patricia"
    # a name that is not a proper noun in context is not swapped
    assert swap_tokens(["james"], ["NN"], names=True) == ["james"]


def test_accepts_a_tagged_doc(tagger):
    doc = tagger("The actress loved her role.")
    assert swap_gender(doc)[0] == "The actor loved his role."


def test_default_pipeline_for_text():
    assert swap_gender("She is a queen.")[0] == "He is a king."


def test_mapping_is_symmetric_and_clean():
    pairs = gender_pairs()
    one_way = one_way_words()
    assert all(target in pairs for target in pairs.values())
    assert all(pairs[pairs[w]] == w for w in pairs if w not in one_way)
    assert len(one_way) < 25 and {"him", "hers"} <= one_way
    assert pairs["he"] == "she" and pairs["she"] == "he" and pairs["himself"] == "herself"
    assert pairs["actor"] == "actress" and pairs["actresses"] == "actors" and pairs["waitress"] == "waiter"
    assert pairs["mr."] == "mrs." and pairs["mrs."] == "mr." and pairs["ms."] == "mr."
    # stray spaces stripped, junk and typos left out
    assert all(w == w.strip() and w == w.lower() and "_" not in w for w in pairs)
    assert not {"mentleman", "godess", "penis", "cialis", "gay", "bull"} & set(pairs)
    assert not {w for pair in NAME_PAIRS for w in pair} & set(pairs)
    pairs["he"] = "changed"
    assert gender_pairs()["he"] == "she"          # callers get a copy


def test_tokens_and_tags_must_align():
    with pytest.raises(ValueError, match="tags"):
        swap_tokens(["he"], [])


def test_titles_before_names_take_their_counterpart_there(tagger):
    out, _ = swap_gender("The narration by Sir Michael Redgrave is moving, sir. Dame Judi Dench and Lord Byron.", tagger)
    assert out == "The narration by Dame Michael Redgrave is moving, ma'am. Sir Judi Dench and Lady Byron."
