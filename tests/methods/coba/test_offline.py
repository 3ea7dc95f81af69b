"""Offline CoBA on real sentences parsed by the bundled pipeline: label edits inside principal triples keep
the word class, spurious words stay, predicates are negated for principal words without polarity, normal
sentences are shuffled or dropped, genders are swapped."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.ngram import BigramModel
from cfaug.proposers.replacements import LexiconProposer
from cfaug.methods.coba.categories import NORMAL, PRINCIPAL, SPURIOUS
from cfaug.methods.coba.offline import OfflinePlanner, domain_lexicon, triple_texts
from cfaug.nlp import load_pipeline
from cfaug.nlp.gender import swap_tokens


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


@pytest.fixture(scope="module")
def planner():
    lexicon = load_lexicon()
    bigram = BigramModel().fit([["the", "film", "was", "awful"], ["a", "terrible", "film"], ["the", "plot", "is", "dull"]])
    return OfflinePlanner(lexicon, LexiconProposer(lexicon, bigram, None), alternatives=2)


def realise(planner, plan, text, seed=0, delete_prob=0.0, alternative=0):
    return planner.realise(plan, text, random.Random(seed), delete_prob, True, alternative)


def test_principal_opinion_words_flip_in_their_word_class(nlp, planner):
    text = "The film was wonderful."
    plan = planner.plan(nlp(text), ["wonderful"], [], "positive", "negative")
    assert plan.categories == [PRINCIPAL]
    new, info = realise(planner, plan, text)
    assert new != text and new.startswith("The film was ") and "wonderful" not in new
    (edit,) = info["edits"]
    assert edit["old"] == "wonderful" and load_lexicon().polarity(edit["new"]) == "negative"
    assert triple_texts(plan, text, info["edits"])[0]["after"][2] == edit["new"]


def test_spurious_words_stay_while_principal_words_in_the_same_triple_flip(nlp, planner):
    text = "Nolan made a brilliant film."
    plan = planner.plan(nlp(text), ["brilliant"], ["nolan"], "positive", "negative")
    assert plan.categories[0] == SPURIOUS
    new, _ = realise(planner, plan, text)
    assert new.startswith("Nolan made a") and "brilliant" not in new
    strict = OfflinePlanner(planner.lexicon, planner.proposer, edit_mixed=False)
    assert not strict.plan(nlp(text), ["brilliant"], ["nolan"], "positive", "negative").slots


def test_a_principal_word_without_polarity_negates_its_predicate(nlp, planner):
    text = "I recommend this movie to everyone."
    plan = planner.plan(nlp(text), ["recommend"], [], "positive", "negative")
    new, info = realise(planner, plan, text)
    assert new == "I do not recommend this movie to everyone."
    assert info["edits"][0]["kind"] == "negation-insert"


def test_a_principal_negator_is_removed(nlp, planner):
    text = "The plot is not bad."
    plan = planner.plan(nlp(text), ["not"], [], "positive", "negative")
    new, _ = realise(planner, plan, text)
    assert "not" not in new.split()


def test_normal_sentences_are_shuffled_and_dropped_the_others_stay(nlp, planner):
    text = ("The film was wonderful. We went on a Sunday. The tickets cost ten dollars. "
            "My brother drove us there. The ending was wonderful too.")
    plan = planner.plan(nlp(text), ["wonderful"], [], "positive", "negative")
    assert plan.sentence_category == [PRINCIPAL, NORMAL, NORMAL, NORMAL, PRINCIPAL]
    orders = Counter()
    for seed in range(20):
        new, info = realise(planner, plan, text, seed=seed)
        assert new.startswith("The film was ") and "wonderful" not in new
        assert info["order"][0] == 0 and info["order"][-1] == 4
        orders[tuple(info["order"])] += 1
    assert len(orders) > 1
    new, info = realise(planner, plan, text, delete_prob=1.0)
    assert info["deleted"] == [1, 2, 3] and "Sunday" not in new and new.count(".") == 2


def test_candidates_take_the_next_best_replacement(nlp, planner):
    text = "The film was wonderful."
    plan = planner.plan(nlp(text), ["wonderful"], [], "positive", "negative")
    first, _ = realise(planner, plan, text, alternative=0)
    second, _ = realise(planner, plan, text, alternative=1)
    assert first != second


def test_gender_words_are_swapped(nlp, planner):
    text = "He said his wife loved the film."
    plan = planner.plan(nlp(text), ["loved"], [], "positive", "negative",
                        swap=lambda words, tags: swap_tokens(words, tags))
    new, _ = realise(planner, plan, text)
    assert new.startswith("She said her husband ") and "loved" not in new


def test_nothing_to_flip_says_why(nlp, planner):
    plan = planner.plan(nlp("We watched it on a Tuesday."), [], [], "positive", "negative")
    assert not plan.slots and "no principal word" in plan.why_none


def test_a_negated_opinion_word_of_the_target_polarity_loses_its_negator(nlp, planner):
    text = "The film was not good."
    plan = planner.plan(nlp(text), [], [], "negative", "positive")
    new, info = realise(planner, plan, text)
    assert new == "The film was good." and info["edits"][0]["kind"] == "negation"


def test_sentence_adverbs_outside_subject_and_object_belong_to_the_triple(nlp, planner):
    from cfaug.methods.coba.offline import triple_words

    doc = nlp("Sadly, the cast was terrible.")
    (triple,) = planner.plan(doc, [], [], "negative", "positive").triples
    assert 0 in triple_words(doc, triple)  # "Sadly"
    new, info = realise(planner, planner.plan(doc, [], [], "negative", "positive"), doc.text)
    assert "terrible" in {e["old"] for e in info["edits"]}
    assert "negation-insert" not in {e["kind"] for e in info["edits"]}  # no double flip of one clause


def test_a_clause_is_flipped_once_not_twice(nlp, planner):
    text = "I recommend this wonderful film."
    plan = planner.plan(nlp(text), ["recommend", "wonderful"], [], "positive", "negative")
    new, info = realise(planner, plan, text)
    assert [e["kind"] for e in info["edits"]] == ["replace"] and "recommend" in new


def test_a_guide_reranks_the_replacements(nlp, planner):
    text = "The film was wonderful."
    plain = planner.plan(nlp(text), ["wonderful"], [], "positive", "negative")
    first = realise(planner, plain, text)[1]["edits"][0]["new"]
    second = realise(planner, plain, text, alternative=1)[1]["edits"][0]["new"]
    guided = OfflinePlanner(planner.lexicon, planner.proposer, guide_weight=10.0,
                            guide=lambda words, target: [5.0 if w == second else 0.0 for w in words])
    plan = guided.plan(nlp(text), ["wonderful"], [], "positive", "negative")
    assert realise(guided, plan, text)[1]["edits"][0]["new"] == second != first


def test_ratings_are_mirrored_and_neutral_principal_words_are_left_alone(nlp, planner):
    text = "I mean it. A dull film, 2/10."
    plan = planner.plan(nlp(text), ["mean", "dull"], [], "negative", "positive")
    new, info = realise(planner, plan, text)
    assert "9/10" in new and "I mean it." in new and "dull" not in new
    eager = OfflinePlanner(planner.lexicon, planner.proposer, negate_neutral=True)
    assert "do not mean" in realise(eager, eager.plan(nlp(text), ["mean", "dull"], [], "negative", "positive"), text)[0]


def test_a_negated_source_opinion_is_left_alone_and_meta_lists_the_words_as_used(nlp, planner):
    text = "The horrors are not bad at all, but the plot is dull."
    plan = planner.plan(nlp(text), ["not", "dull"], ["bad", "plot"], "negative", "positive")
    new, info = realise(planner, plan, text)
    assert "not bad" in new and "dull" not in new
    assert "bad" in plan.principal and "bad" not in plan.spurious and "plot" in plan.spurious


def test_negate_prob_negates_clauses_instead_of_replacing_their_words(nlp, planner):
    text = "The film was wonderful."
    negator = OfflinePlanner(planner.lexicon, planner.proposer, negate_prob=1.0)
    new, info = realise(negator, negator.plan(nlp(text), ["wonderful"], [], "positive", "negative"), text)
    assert new == "The film was not wonderful." and [e["kind"] for e in info["edits"]] == ["negation-insert"]


@pytest.mark.parametrize("text,word", [
    ("It is an excellent film with a great cast.", "excellent"),
    ("It is a great film.", "great"),
])
def test_the_indefinite_article_agrees_with_the_replacement(nlp, planner, text, word):
    from cfaug.nlp.inflect import indefinite_article

    plan = planner.plan(nlp(text), [word], [], "positive", "negative")
    for alternative in (0, 1):
        new, info = realise(planner, plan, text, alternative=alternative)
        edit = next(e for e in info["edits"] if word in e["old"])
        article, replacement = edit["new"].split()[:2] if " " in edit["new"] else (None, edit["new"])
        before = new[: new.index(replacement)].split()[-1]
        assert before.lower() == indefinite_article(replacement), (new, edit)
        assert article is None or article.lower() == before.lower()


def test_a_domain_lexicon_drops_the_words_the_data_contradicts(nlp, planner):
    lexicon = load_lexicon()
    weights = {"funny": 0.5, "interesting": -0.8, "dull": -2.0, "great": 1.5, "crime": 0.1}

    def push(words, target):
        assert target == "positive"
        return [weights.get(w, 0.0) for w in words]

    adapted, dropped = domain_lexicon(lexicon, push, 0.2)
    assert sorted(dropped) == ["funny", "interesting"]  # crime leans positive, but by less than the margin
    assert adapted.polarity("funny") is None and adapted.polarity("interesting") is None
    assert adapted.polarity("dull") == "negative" and adapted.polarity("great") == "positive"
    assert adapted.polarity("crime") == lexicon.polarity("crime") == "negative"
    # a dropped word is no opinion word: "funny" in a negative review is neither principal nor replaced
    text = "It tried to be funny."
    assert PRINCIPAL in planner.plan(nlp(text), [], [], "negative", "positive").categories
    domain = OfflinePlanner(adapted, LexiconProposer(adapted, planner.proposer.bigram, None))
    plan = domain.plan(nlp(text), [], [], "negative", "positive")
    assert not plan.slots and plan.categories == [NORMAL] * len(plan.categories)
    # and it is never proposed as a replacement
    plan = domain.plan(nlp("The film was wonderful."), ["wonderful"], [], "positive", "negative")
    assert all(e.new != "funny" for alts in plan.slots for e in alts)


def test_names_groups_manner_adverbs_and_worth_as_in_auto_cad(nlp, planner):
    text = "We saw Great Expectations. The script is well written and it is worth seeing."
    plan = planner.plan(nlp(text), [], [], "positive", "negative")
    new, info = realise(planner, plan, text)
    assert "Great Expectations" in new  # a name is no opinion
    assert "poorly written" in new and "not worth seeing" in new
    assert {(e["old"], e["new"]) for e in info["edits"]} == {("well", "poorly"), ("worth", "not worth")}


class _AskedWords:
    """A proposer that records which words it is asked to replace and offers "fine" for each."""

    def __init__(self):
        self.asked = []

    def propose(self, requests):
        self.asked += [r.word for r in requests]
        return [[("fine", 1.0)] for _ in requests]


def test_important_content_words_leave_facts_alone(nlp, planner):
    doc = nlp("The death of his friend makes this awful film hard to watch.")
    every = OfflinePlanner(planner.lexicon, _AskedWords())
    every.plan(doc, [], [], "negative", "positive")
    assert sorted(every.proposer.asked) == ["awful", "death", "hard"]
    strict = OfflinePlanner(planner.lexicon, _AskedWords(), content_words="important")
    strict.plan(doc, [], [], "negative", "positive")
    assert sorted(strict.proposer.asked) == ["awful", "hard"]  # a noun the ensemble does not weigh states a fact
    strict.proposer.asked.clear()
    strict.plan(doc, ["death"], [], "negative", "positive")
    assert sorted(strict.proposer.asked) == ["awful", "death", "hard"]  # ... unless the ensemble ranks it


@pytest.fixture(scope="module")
def repairing(planner):
    return OfflinePlanner(planner.lexicon, planner.proposer, alternatives=2, contrast_repair=True)


def test_but_becomes_and_when_the_edits_make_both_parts_agree(nlp, planner, repairing):
    negative = "The plot was good but the ending was bad."
    new, _ = realise(repairing, repairing.plan(nlp(negative), ["bad"], [], "negative", "positive"), negative)
    assert new.startswith("The plot was good and the ending was ") and "bad" not in new
    text = "The acting was superb but the plot was dull."
    plan = repairing.plan(nlp(text), ["superb"], [], "positive", "negative")
    new, info = realise(repairing, plan, text)
    assert " and the plot was dull." in new and " but " not in new and "superb" not in new
    assert {"old": "but", "new": "and"}.items() <= next(e for e in info["edits"] if e["old"] == "but").items()
    # off by default
    assert " but the plot was dull." in realise(planner, planner.plan(nlp(text), ["superb"], [], "positive", "negative"),
                                                text)[0]


@pytest.mark.parametrize("text, principal", [
    # the part before "but" leans nowhere
    ("We went on a Monday but the show was great.", ["great"]),
    # no edit in the sentence that holds "but"
    ("It was wonderful. We came in late but we found two seats.", ["wonderful"]),
])
def test_but_stays_where_the_parts_still_disagree_or_nothing_was_edited(nlp, repairing, text, principal):
    plan = repairing.plan(nlp(text), principal, [], "positive", "negative")
    new, info = realise(repairing, plan, text)
    assert info["edits"] and " but " in new and not any(e["old"] == "but" for e in info["edits"])


def test_side_polarity_reads_negation():
    from cfaug.methods.coba.offline import side_polarity

    lexicon = load_lexicon()
    assert side_polarity(["the", "plot", "was", "good"], lexicon) == 1
    assert side_polarity(["the", "plot", "was", "not", "very", "good"], lexicon) == -1
    assert side_polarity(["it", "was", "n't", "good"], lexicon) == -1
    assert side_polarity(["the", "plot"], lexicon) == 0
