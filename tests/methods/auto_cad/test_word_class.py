"""Edits a reader accepts: replacements keep the replaced word's class and form, and the indefinite article
agrees with the word after it. Real review sentences, tagged by the bundled pipeline."""


import pytest

from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.text import agree_article
from cfaug.editing.ngram import BigramModel
from cfaug.proposers.replacements import LexiconProposer, ReplacementRequest, Weights, fit_word_class
from cfaug.editing.text import Edit, apply_edits, tokenize
from cfaug.nlp import load_pipeline
from cfaug.nlp.inflect import lemmas, upos_of_tag

LEX = load_lexicon()


def tag_of(sentence, word):
    doc = load_pipeline(only=("tok2vec", "tagger"))(sentence)
    return next(t.tag_ for t in doc if t.text == word)


@pytest.mark.parametrize("sentence,word,tag", [
    ("I loved every minute of this film.", "loved", "VBD"),
    ("It is a great film with a superb cast.", "great", "JJ"),
    ("The ending is a masterpiece.", "masterpiece", "NN"),
    ("She sings beautifully.", "beautifully", "RB"),
])
def test_tagger_gives_the_word_class_of_review_words(sentence, word, tag):
    assert tag_of(sentence, word) == tag


def test_candidates_take_the_replaced_words_class_and_form():
    req = ReplacementRequest("loved", "i", "every", "negative", tag="VBD")
    out = fit_word_class([("hate", 1.0), ("hates", 0.9), ("terrible", 0.8), ("despise", 0.5)], req)
    assert out == [("hated", 1.0), ("despised", 0.5)]  # one form per lemma; an adjective cannot replace a verb
    req = ReplacementRequest("masterpiece", "a", ".", "negative", tag="NN")
    assert [c for c, _ in fit_word_class([("mess", 1.0), ("awful", 0.9), ("disasters", 0.5)], req)] == ["mess", "disaster"]


@pytest.mark.parametrize("sentence,word", [
    ("He gave a stunning performance.", "stunning"),
    ("This fast-moving programmer has a satisfying emotional impact.", "satisfying"),
    ("A disappointing ending ruined it.", "disappointing"),
])
def test_a_participle_the_tagger_calls_a_noun_is_replaced_by_an_adjective(sentence, word):
    tag = tag_of(sentence, word)
    assert tag == "NN"  # the tagger's error this guards against; an adjective fits
    req = ReplacementRequest(word, "a", "performance", "negative" if word != "disappointing" else "positive",
                             tag=tag)
    cands = [("pain", 1.0), ("awful", 0.9), ("boredom", 0.8), ("terrific", 0.7), ("delight", 0.6)]
    out = [c for c, _ in fit_word_class(cands, req)]
    assert out == ["awful", "terrific"]


@pytest.mark.parametrize("word,tag,cands,expected", [
    # the dictionary lets "quiet" be a noun and "safe" a verb; readers never meet them so
    ("outsider", "NN", [("quiet", 1.0), ("favorite", 0.9), ("gem", 0.5)], ["gem"]),
    ("warned", "VBN", [("safe", 1.0), ("praised", 0.5)], ["praised"]),
    ("twist", "NN", [("tough", 1.0), ("triumph", 0.5)], ["triumph"]),
])
def test_candidates_must_usually_be_of_the_replaced_words_class(word, tag, cands, expected):
    req = ReplacementRequest(word, "a", ".", "positive", tag=tag)
    assert [c for c, _ in fit_word_class(cands, req)] == expected


@pytest.mark.parametrize("word,tag,cands,expected", [
    # a participle slot takes a verb's participle, or an adjective that is one, seen in review text
    ("engaging", "VBG", [("boring", 1.0), ("annoying", 0.9), ("dim", 0.8)], ["boring", "annoying"]),
    ("wasted", "VBN", [("clean", 1.0), ("safe", 0.9), ("deserve", 0.5)], ["deserved"]),
    ("wasted", "VBD", [("safe", 1.0), ("deserve", 0.5)], ["deserved"]),
])
def test_participle_slots_take_participles_readers_know(word, tag, cands, expected):
    req = ReplacementRequest(word, "was", ".", "positive" if word == "wasted" else "negative", tag=tag)
    assert [c for c, _ in fit_word_class(cands, req)] == expected


def test_topical_class():
    from cfaug.editing.word_roles import topical_class

    assert topical_class("murder", "NN") and topical_class("warned", "VBD")
    assert not topical_class("awful", "JJ") and not topical_class("murder", "")
    assert not topical_class("stunning", "NN")  # a participle the tagger took for a noun: an adjective
    assert not topical_class("annoyed", "VBN")  # usually an adjective in review text
    assert topical_class("killing", "VBG")


def test_untagged_requests_keep_their_candidates():
    req = ReplacementRequest("great", "a", "film", "negative")
    assert fit_word_class([("awful", 1.0), ("mess", 0.5)], req) == [("awful", 1.0), ("mess", 0.5)]


def test_lexicon_proposer_respects_the_tag():
    bigram = BigramModel().fit([["a", "great", "film"], ["i", "loved", "it"]])
    prop = LexiconProposer(LEX, bigram, None, weights=Weights(), top_n=200, min_prior=-1.0)
    for word, tag in (("loved", "VBD"), ("great", "JJ"), ("masterpiece", "NN")):
        cands = prop.propose([ReplacementRequest(word, "<s>", "</s>", "negative", tag=tag)])[0]
        assert cands, word
        upos = upos_of_tag(tag)
        assert all(upos in lemmas(c) for c, _ in cands), (word, cands[:5])


@pytest.mark.parametrize("text,word,new,expected", [
    ("It is a great film.", "great", "awful", "It is an awful film."),
    ("It is an excellent film.", "excellent", "terrible", "It is a terrible film."),
    ("An excellent film.", "excellent", "dreadful", "A dreadful film."),
    ("It is a great film.", "great", "terrible", "It is a terrible film."),
    ("It is an excellent film.", "excellent", "", "It is a film."),
    ("A great idea, an awful result.", "great", "", "An idea, an awful result."),
])
def test_article_agrees_with_the_new_word(text, word, new, expected):
    tokens = tokenize(text)
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    edit = Edit(tokens[i].start, tokens[i].end, new, tokens[i].text, "replace" if new else "remove")
    assert apply_edits(text, [agree_article(text, tokens, i, edit)]) == expected


def test_no_article_no_change():
    text = "The film is great."
    tokens = tokenize(text)
    edit = Edit(tokens[3].start, tokens[3].end, "awful", "great", "replace")
    assert agree_article(text, tokens, 3, edit) is edit


@pytest.mark.parametrize("sentence,word,name", [
    ("We saw Great Expectations by Dickens.", "Great", True),
    ("Peter Ustinov stars in Hot Millions, a comedy.", "Hot", True),
    ("The Good Shepherd is long.", "Good", True),
    ("Terrible acting, terrible plot.", "Terrible", False),  # first word of its sentence
    ("I beg you DON'T BOTHER with it.", "BOTHER", False),  # capitals are emphasis
    ("It was great.", "great", False),
])
def test_words_of_names_and_titles_are_recognised(sentence, word, name):
    from cfaug.editing.word_roles import in_name

    tokens = tokenize(sentence)
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    assert in_name(tokens, i, {}) is name


@pytest.mark.parametrize("word,tag,left,right,cands,expected", [
    # "Susann ripped into him": a verb that never takes "into" would leave "loved into him"
    ("ripped", "VBD", "susann", "into", [("love", 1.0), ("praise", 0.5)], []),
    ("ripped", "VBD", "susann", "him", [("love", 1.0)], ["loved"]),
    # "they totally messed up the plot": neither "liked up" nor "lived up" reads
    ("messed", "VBD", "totally", "up", [("like", 1.0), ("live", 0.5)], []),
    # "everyone sucked." / "after he died, ...": a verb that ends its clause needs no object
    ("sucked", "VBD", "everyone", ".", [("enjoy", 1.0), ("win", 0.5)], ["won"]),
    ("died", "VBD", "he", ",", [("love", 1.0), ("win", 0.5)], ["won"]),
    # "I loved it": a transitive verb for a transitive verb
    ("loved", "VBD", "i", "it", [("hate", 1.0), ("die", 0.5)], ["hated"]),
    # "I am tired of it": the adjective keeps its "of"
    ("tired", "JJ", "am", "of", [("clean", 1.0), ("fond", 0.5), ("proud", 0.4)], ["fond", "proud"]),
    # a preposition that begins an adjunct is not judged
    ("beautiful", "JJ", "is", "in", [("awful", 1.0)], ["awful"]),
])
def test_replacements_keep_the_particle_or_complement_that_follows(word, tag, left, right, cands, expected):
    polarity = "positive" if word in ("ripped", "messed", "tired", "sucked", "died") else "negative"
    req = ReplacementRequest(word, left, right, polarity, tag=tag)
    assert [c for c, _ in fit_word_class(cands, req)] == expected


class _Vectors:
    """A stand-in encoder: fixed two-dimensional vectors, so priors are known cosine values."""

    table = {"monster": (1.0, 0.0), "gem": (0.3, 0.954), "hero": (0.6, 0.8), "disappointment": (0.0, 1.0),
             "delight": (0.0, 1.0)}

    def encode(self, words):
        import numpy as np

        return np.array([self.table.get(w, (0.0, 0.0)) for w in words], dtype=float)


@pytest.mark.parametrize("noun_min_prior,expected", [(0.0, {"gem", "hero"}), (0.45, {"hero"})])
def test_noun_min_prior_drops_distant_nouns(noun_min_prior, expected):
    bigram = BigramModel().fit([["the", "gem", "hero", "delight"]] * 3)
    prop = LexiconProposer(LEX, bigram, _Vectors(), top_n=200, min_prior=0.2, noun_min_prior=noun_min_prior)
    cands = prop.propose([ReplacementRequest("monster", "the", "hunts", "positive", tag="NN")])[0]
    assert {c for c, _ in cands} == expected
    # the antonym table vouches for a pair whatever its prior
    cands = prop.propose([ReplacementRequest("disappointment", "a", ".", "positive", tag="NN")])[0]
    assert "delight" in {c for c, _ in cands}


@pytest.mark.parametrize("sentence,word,nominal", [
    ("His message about the disabled and the life he spent is great.", "disabled", True),
    ("He can possess the bodies of the weak.", "weak", True),
    ("The poor are always with us.", "poor", True),
    ("The incredible, slow-motion scenes are great.", "incredible", False),  # two adjectives before a noun
    ("She was cast as the gentle but rebellious daughter.", "gentle", False),
    ("It is one of the best of all time.", "best", False),  # a superlative is an opinion
    ("The awful acting ruined it.", "awful", False),
])
def test_adjectives_naming_a_group_of_people_are_recognised(sentence, word, nominal):
    from cfaug.editing.word_roles import nominal_adjective

    doc = load_pipeline(only=("tok2vec", "tagger"))(sentence)
    tags = {t.idx: t.tag_ for t in doc}
    tokens = tokenize(sentence)
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    assert nominal_adjective(tokens, i, tags) is nominal


@pytest.mark.parametrize("sentence,word,neighbour", [
    # real review sentences (the packaged CAD-IMDB demo sample) where the tagger reads an adjective as a noun
    ("John Turturro is absolutely stunning in his portrayal of a tender, eccentric chess Grandmaster.",
     "tender", ","),
    ("Most people will come out feeling somewhat touched by this brilliant look at the most unlikely of love "
     "stories.", "brilliant", "look"),
])
def test_an_adjective_the_tagger_calls_a_noun_in_its_noun_phrase_gets_an_adjective(sentence, word, neighbour):
    from cfaug.nlp.inflect import doc_tags

    doc = load_pipeline(only=("tok2vec", "tagger"))(sentence)
    tok = next(t for t in doc if t.text == word)
    assert tok.tag_ == "NN"  # the misreading this guards against
    tag = doc_tags(doc)[tok.idx]
    assert tag == "JJ"
    req = ReplacementRequest(word, "a", neighbour, "negative", tag=tag)
    cands = [("mess", 1.0), ("shame", 0.95), ("harsh", 0.9), ("stupid", 0.8)]
    assert [c for c, _ in fit_word_class(cands, req)] == ["harsh", "stupid"]
