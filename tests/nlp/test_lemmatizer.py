"""The table lemmatizer: learned from CoNLL-U, rules for unknown words, saved and loaded with its pipeline."""

import spacy
from spacy.tokens import Doc
from spacy.training import Example

from cfaug.nlp.lemmatizer import TableLemmatizer, rule_lemma

# UD-style rows (id, form, lemma, UPOS, XPOS): "her" is two lemmas by tag; "ca" is a form rules cannot know
CONLLU = """# text = She could n't see her keys.
1\tShe\tshe\tPRON\tPRP\t_\t3\tnsubj\t_\t_
2-3\tcouldn't\t_\t_\t_\t_\t_\t_\t_\t_
2\tcould\tcould\tAUX\tMD\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tsee\tsee\tVERB\tVB\t_\t0\troot\t_\t_
5\ther\ther\tPRON\tPRP$\t_\t6\tnmod:poss\t_\t_
6\tkeys\tkey\tNOUN\tNNS\t_\t4\tobj\t_\t_
7\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# text = We ca n't find her.
1\tWe\twe\tPRON\tPRP\t_\t4\tnsubj\t_\t_
2\tca\tcan\tAUX\tMD\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tfind\tfind\tVERB\tVB\t_\t0\troot\t_\t_
5\ther\tshe\tPRON\tPRP\t_\t4\tobj\t_\t_
6\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_
"""


def fitted(tmp_path):
    path = tmp_path / "tiny.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    lem = TableLemmatizer()
    counts = lem.fit_conllu([path])
    return lem, counts


def test_rules_cover_open_class_words_and_keep_proper_nouns():
    assert rule_lemma("batteries", "NOUN") == "battery"
    assert rule_lemma("loved", "VERB") == "love"
    assert rule_lemma("Loved", "VERB") == "love"
    assert rule_lemma("worse", "ADJ") == "bad"
    assert rule_lemma("Paris", "PROPN") == "Paris"
    assert rule_lemma("The", "DET") == "the"


def test_table_learns_only_what_the_rules_miss(tmp_path):
    lem, counts = fitted(tmp_path)
    assert counts["tokens"] == 13  # the multi-word line "couldn't" is not a token
    assert lem.lemma("ca", "AUX", "MD") == "can"
    assert lem.lemma("n't", "PART", "RB") == "not"
    # the Penn tag separates the possessive from the object pronoun
    assert lem.lemma("her", "PRON", "PRP$") == "her"
    assert lem.lemma("her", "PRON", "PRP") == "she"
    # words the rules already get right are not stored
    assert ("keys", "NOUN") not in lem.lower and ("keys", "NOUN", "NNS") not in lem.exact
    assert lem.lemma("keys", "NOUN", "NNS") == "key"


def test_sets_lemmas_in_a_pipeline_and_survives_a_save(tmp_path):
    lem, _ = fitted(tmp_path)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("cfaug_lemmatizer", name="lemmatizer")
    pipe.exact, pipe.lower = lem.exact, lem.lower
    nlp.to_disk(tmp_path / "model")
    again = spacy.load(tmp_path / "model")
    doc = Doc(again.vocab, words=["We", "ca", "n't", "find", "her", "keys"],
              pos=["PRON", "AUX", "PART", "VERB", "PRON", "NOUN"], tags=["PRP", "MD", "RB", "VB", "PRP", "NNS"])
    doc = again.get_pipe("lemmatizer")(doc)
    assert [t.lemma_ for t in doc] == ["we", "can", "not", "find", "she", "key"]


def test_keeps_earlier_lemmas_unless_told_to_overwrite(tmp_path):
    words, pos = ["dogs"], ["NOUN"]
    doc = Doc(spacy.blank("en").vocab, words=words, pos=pos, lemmas=["hound"])
    assert TableLemmatizer()(doc)[0].lemma_ == "hound"
    assert TableLemmatizer(overwrite=True)(doc)[0].lemma_ == "dog"


def test_scores_lemma_accuracy():
    vocab = spacy.blank("en").vocab
    pred = Doc(vocab, words=["cats", "ran"], pos=["NOUN", "VERB"])
    gold = Doc(vocab, words=["cats", "ran"], lemmas=["cat", "run"])
    TableLemmatizer()(pred)
    assert TableLemmatizer().score([Example(pred, gold)])["lemma_acc"] == 1.0
