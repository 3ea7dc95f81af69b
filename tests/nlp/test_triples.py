"""Subject-predicate-object triples from real sentences parsed by the bundled pipeline. The parser is
statistical: the sentences are ones it parses right, and the asserts are about the texts of the parts."""

import json

import pytest

from cfaug.nlp import load_pipeline
from cfaug.nlp.triples import Span, Triple, describe_triple, extract_triples, text_triples


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


@pytest.fixture(scope="module")
def triples(nlp):
    def run(text):
        doc = nlp(text)
        return doc, extract_triples(doc)
    return run


def tuples(ts):
    return [t.as_tuple() for t in ts]


def test_subject_verb_object(triples):
    doc, ts = triples("The waiter brought the wrong dish.")
    assert tuples(ts) == [("The waiter", "brought", "the wrong dish")]
    t = ts[0]
    assert not t.negated and doc[t.head].text == "brought"
    assert t.clause.text == "The waiter brought the wrong dish"
    assert t.words() == ["the", "waiter", "brought", "the", "wrong", "dish"]


def test_copula(triples):
    _, ts = triples("The food was cold.")
    assert tuples(ts) == [("The food", "was", "cold")]


def test_negation_kept_in_the_predicate(triples):
    doc, ts = triples("It is not a good film.")
    assert tuples(ts) == [("It", "is not", "a good film")]
    t = ts[0]
    assert t.negated and "not" in [tok.text for tok in doc[t.predicate.start:t.predicate.end]]
    _, ts = triples("I did not like the movie.")
    assert tuples(ts) == [("I", "did not like", "the movie")] and ts[0].negated
    _, ts = triples("I didn't like it, but my wife loved it.")
    assert tuples(ts) == [("I", "didn't like", "it"), ("my wife", "loved", "it")]
    assert [t.negated for t in ts] == [True, False]


def test_passive_subject_and_agent(triples):
    _, ts = triples("The waiter was fired by the manager.")
    assert tuples(ts) == [("The waiter", "was fired by", "the manager")]


def test_conjoined_predicates_inherit_the_subject(triples):
    _, ts = triples("I loved the plot and hated the ending.")
    assert tuples(ts) == [("I", "loved", "the plot"), ("I", "hated", "the ending")]
    # the inherited subject is not part of the second clause, so the clause can be deleted alone
    assert [t.clause.text for t in ts] == ["I loved the plot", "hated the ending"]


def test_conjoined_objects_split(triples):
    _, ts = triples("We ordered soup and bread.")
    assert tuples(ts) == [("We", "ordered", "soup"), ("We", "ordered", "bread")]
    assert ts[0].clause == ts[1].clause and ts[0].predicate == ts[1].predicate
    _, ts = triples("The food was cold and bland.")
    assert tuples(ts) == [("The food", "was", "cold"), ("The food", "was", "bland")]


def test_prepositional_object_joins_the_predicate(triples):
    _, ts = triples("We are in a restaurant.")
    assert tuples(ts) == [("We", "are in", "a restaurant")]
    _, ts = triples("The batteries died after two weeks.")
    assert tuples(ts) == [("The batteries", "died after", "two weeks")]


def test_relative_clause_subject_is_the_modified_noun(triples):
    _, ts = triples("The staff, who were friendly, helped us quickly.")
    assert tuples(ts) == [("The staff", "were", "friendly"), ("The staff", "helped", "us")]
    assert ts[0].clause.text == "who were friendly"
    _, ts = triples("I never liked the pizza they served.")
    # the object of the main clause stops before the relative clause
    assert tuples(ts) == [("I", "never liked", "the pizza"), ("they", "served", "the pizza")]
    assert ts[0].negated and not ts[1].negated
    assert ts[1].clause.text == "they served"


def test_clausal_complement_and_adverbial_clause(triples):
    _, ts = triples("I think that the service is slow because they are understaffed.")
    assert tuples(ts) == [("I", "think", "that the service is slow"), ("the service", "is", "slow"),
                          ("they", "are", "understaffed")]
    _, ts = triples("He wants to leave the restaurant.")
    assert tuples(ts) == [("He", "wants", "to leave the restaurant")]


def test_expletive_subject(triples):
    _, ts = triples("There is a problem with the food.")
    assert tuples(ts) == [("There", "is", "a problem with the food")]


def test_fragment_sentence(triples):
    doc, ts = triples("Great movie!")
    assert len(ts) == 1
    t = ts[0]
    assert t.subject is None and t.object is None and t.predicate.text == "movie"
    assert t.clause.text == "Great movie!" and (t.clause.start, t.clause.end) == (0, len(doc))


def test_imperative_has_no_subject(triples):
    _, ts = triples("Avoid this place.")
    assert tuples(ts) == [("", "Avoid", "this place")]


def test_multi_sentence_text(triples):
    doc, ts = triples("I did not like the movie. The acting was terrible, but the music was great. Great score!")
    assert [t.sentence for t in ts] == [0, 1, 1, 2]
    assert tuples(ts)[1:3] == [("The acting", "was", "terrible"), ("the music", "was", "great")]
    assert ts[3].subject is None and ts[3].predicate.text == "score"
    sents = list(doc.sents)
    for t in ts:
        s = sents[t.sentence]
        assert s.start <= t.clause.start < t.clause.end <= s.end


def test_spans_map_back_to_the_text(nlp):
    texts = ["The place, which opened last year, serves good coffee. We went back twice!",
             "Honestly, the staff were rude and the room was  dirty.", "Meh."]
    for doc in nlp.pipe(texts):
        ts = extract_triples(doc)
        assert {t.sentence for t in ts} == set(range(len(list(doc.sents))))   # every sentence is covered
        for t in ts:
            for span in (t.subject, t.predicate, t.object, t.clause):
                if span is None:
                    continue
                assert doc.text[span.start_char:span.end_char] == span.text
                assert doc[span.start:span.end].text == span.text
            assert t.clause.start <= t.predicate.start and t.predicate.end <= t.clause.end


def test_clauses_cover_the_sentence(nlp):
    doc = nlp("The service was slow, the food was bland and the prices were high.")
    ts = extract_triples(doc)
    assert tuples(ts) == [("The service", "was", "slow"), ("the food", "was", "bland"),
                          ("the prices", "were", "high")]
    covered = {i for t in ts for i in range(t.clause.start, t.clause.end)}
    assert all(i in covered for i, tok in enumerate(doc) if not (tok.is_punct or tok.dep_ == "cc"))


def test_text_triples_and_describe(nlp):
    out = text_triples(["The food was cold.", "", "Great movie!"], nlp=nlp, batch_size=2)
    assert len(out) == 3 and out[1] == []
    assert tuples(out[0]) == [("The food", "was", "cold")]
    d = describe_triple(out[2][0])
    assert d["subject"] is None and d["object"] is None
    assert d["predicate"] == {"text": "movie", "span": [1, 2], "chars": [6, 11]}
    assert json.loads(json.dumps(describe_triple(out[0][0])))["object"]["text"] == "cold"


def test_text_triples_uses_the_bundled_pipeline_by_default():
    assert tuples(text_triples(["We ordered soup."])[0]) == [("We", "ordered", "soup")]


def test_unparsed_doc_is_refused(nlp):
    doc = nlp.make_doc("The food was cold.")
    with pytest.raises(ValueError, match="dependency parse"):
        extract_triples(doc)


def test_dataclasses():
    s = Span(0, 2, 0, 8, "The food")
    t = Triple(sentence=0, subject=s, predicate=Span(2, 3, 9, 12, "was"), object=None,
               clause=Span(0, 3, 0, 12, "The food was"), negated=False, head=2)
    assert t.as_tuple() == ("The food", "was", "") and t.words() == ["the", "food", "was"] and len(s) == 2
