"""Negation both ways: RM-CT removes a negator (tested with the method); REP-CT can insert one."""

import pytest

from cfaug.editing.negation import negate_predicate
from cfaug.editing.text import apply_edits, tokenize
from cfaug.nlp import load_pipeline


def negate(text, word):
    tokens = tokenize(text)
    tags = {t.idx: t.tag_ for t in load_pipeline(only=("tok2vec", "tagger"))(text)}
    i = next(k for k, t in enumerate(tokens) if t.text == word)
    edit = negate_predicate(tokens, i, tags)
    return None if edit is None else apply_edits(text, [edit])


@pytest.mark.parametrize("text,word,expected", [
    ("The film is worth seeing.", "worth", "The film is not worth seeing."),
    ("It's a great film.", "great", "It's not a great film."),
    ("The acting was really terrible.", "terrible", "The acting was not really terrible."),
    ("I loved it.", "loved", "I did not love it."),
    ("She hates the ending.", "hates", "She does not hate the ending."),
    ("They enjoy every scene.", "enjoy", "They do not enjoy every scene."),
    ("You will love it.", "love", "You will not love it."),
])
def test_a_negator_goes_after_the_auxiliary_or_with_do(text, word, expected):
    assert negate(text, word) == expected


@pytest.mark.parametrize("text,word", [
    ("It was not good.", "good"),          # already negated
    ("A great film.", "great"),            # no predicate to negate
    ("The great cast saves it.", "great"),  # the word is inside the subject
])
def test_nothing_to_negate(text, word):
    assert negate(text, word) is None


def test_method_chooses_negation_and_never_negates_twice(tiny_auto_cad):
    from cfaug.data.records import Record, WorkItem

    # alternatives=1: the one REP-CT rewrite takes each word's best option, which the weight makes a negation
    m, task = tiny_auto_cad(negation_weight=50.0, alternatives=1)
    item = WorkItem(Record("x", {"text": "This was an awful waste of time and I hated it."}, "negative"), "positive")
    [cfs] = m.generate([item], task)
    rep = next(cf for cf in cfs if cf.meta["variant"] == "rep-ct")
    kinds = [e["kind"] for e in rep.meta["edits"]]
    assert "negation-insert" in kinds
    text = rep.fields["text"]
    assert text.count(" not ") == kinds.count("negation-insert") and "not not" not in text
    assert "excellent waste" not in text and "awful" in text  # a negated stretch keeps its words


def remove_negator(text, negator, lexicon=True):
    from cfaug.editing.lexicon import load_lexicon
    from cfaug.editing.negation import negator_removal

    tokens = tokenize(text)
    i = next(k for k, t in enumerate(tokens) if t.lower == negator)
    return apply_edits(text, [negator_removal(tokens, i, text, load_lexicon() if lexicon else None)])


@pytest.mark.parametrize("text,negator,expected", [
    ("I did not like the ending.", "not", "I liked the ending."),
    ("She doesn't really work well here.", "n't", "She really works well here."),
    ("It does not have any good scenes.", "not", "It has some good scenes."),
    ("First of all, they didn't cast anyone in a title role.", "n't", "First of all, they cast someone in a title role."),
    ("I have never seen anything like it.", "never", "I have seen something like it."),
    ("It isn't any better than the first.", "n't", "It is better than the first."),
    ("It wasn't any good.", "n't", "It was good."),
    ("I won't watch it again.", "n't", "I will watch it again."),
    ("This movie never panders to the audience.", "never", "This movie panders to the audience."),
    ("never again will i go there .", "never", "once again will i go there ."),   # not "again will i go"
    ("We left. Never again will we order from them!", "never", "We left. Once again will we order from them!"),
    ("I will never again go there.", "never", "I will again go there."),           # no inversion: "never" goes
    ("Never again!", "never", "Again and again!"),                                 # "Again!" alone says nothing
])
def test_negator_removal_keeps_the_sentence_idiomatic(text, negator, expected):
    assert remove_negator(text, negator) == expected


@pytest.mark.parametrize("text,negator,expected", [
    ("Don't waste your time.", "n't", "Do waste your time."),        # an imperative keeps its "do"
    ("Why didn't they stop?", "n't", "Why did they stop?"),          # so does a question
    ("He didn't.", "n't", "He did."),                                # no verb to take the tense
    ("I didn't find it funny at any point.", "n't", "I found it funny at any point."),  # "funny" bars the span
])
def test_negator_removal_leaves_what_it_cannot_rewrite_safely(text, negator, expected):
    assert remove_negator(text, negator) == expected


def test_without_the_text_only_the_negator_goes():
    from cfaug.editing.negation import negator_removal

    text = "I did not like the ending."
    tokens = tokenize(text)
    assert apply_edits(text, [negator_removal(tokens, 2)]) == "I did like the ending."


@pytest.mark.parametrize("text,expected", [
    ("It is really worth watching.", "It is really not worth watching."),
    ("It's well worth it.", "It's not worth it."),
    ("Well worth catching.", "Not worth catching."),
    ("IT WAS WORTH IT", "IT WAS NOT WORTH IT"),
    ("It was not worth it.", None),           # already negated
    ("You get your money's worth.", None),    # a noun, ending its clause
    ("It was worth.", None),                  # no complement
    ("if you get your monies worth for two hours that is enough", None),  # a noun before "for"
    ("We got our money's worth and more.", None),  # a noun after money
    ("The film's worth seeing.", "The film's not worth seeing."),  # "film's": the film is
])
def test_worth_before_its_complement_is_negated_not_replaced(text, expected):
    from cfaug.editing.negation import negate_complement_taker

    tokens = tokenize(text)
    tags = {t.idx: t.tag_ for t in load_pipeline(only=("tok2vec", "tagger"))(text)}
    i = next(k for k, t in enumerate(tokens) if t.lower == "worth")
    edit = negate_complement_taker(tokens, i, tags)
    assert (None if edit is None else apply_edits(text, [edit])) == expected


def test_worth_is_never_proposed_as_a_replacement():
    from cfaug.editing.lexicon import load_lexicon
    from cfaug.editing.ngram import BigramModel
    from cfaug.proposers.replacements import LexiconProposer

    bigram = BigramModel().fit([["it", "is", "worth", "it", "and", "great"]] * 3)
    prop = LexiconProposer(load_lexicon(), bigram, None, top_n=500, min_prior=-1.0)
    assert "worth" not in {w for w, _ in prop.priors("worthless", "positive")}
    assert "great" in {w for w, _ in prop.priors("worthless", "positive")}


def test_an_opinion_word_that_is_the_subject_of_a_negated_verb_is_no_opinion():
    from cfaug.editing.lexicon import load_lexicon
    from cfaug.methods.auto_cad.causal_terms import find_candidates
    from cfaug.methods.auto_cad.term_selection import drop_negated_subjects

    lexicon = load_lexicon()
    tokens = tokenize("And my problem isn't with the real person. The choppy editing did not give me a sense of it.")
    terms = find_candidates(tokens, lexicon, "negative", bare_negations=True)
    named = lambda ts: sorted(" ".join(tokens[j].text for j in t.phrase) for t in ts)  # noqa: E731
    assert named(terms) == ["choppy", "n't with the real", "not give me a", "problem"]
    # "my problem isn't with" says nothing bad: both go ("my progress is with" was written); "choppy" and the
    # negator of "did not give" both say something bad and both stay
    assert named(drop_negated_subjects(tokens, terms, lexicon)) == ["choppy", "not give me a"]
    positive = tokenize("It was not bad and the cast isn't great.")
    kept = find_candidates(positive, lexicon, "positive", bare_negations=True)
    assert drop_negated_subjects(positive, kept, lexicon) == kept  # "not bad" negates an opinion word: kept
