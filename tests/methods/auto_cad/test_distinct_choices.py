"""REP-CT never makes two different words of a sentence the same word ("courteous and friendly" -> "rude and
unfriendly", not "rude and rude"): the planner's choice of each term's option."""

from cfaug.editing.text import Edit, apply_edits, tokenize
from cfaug.methods.auto_cad.causal_terms import CausalTerm
from cfaug.methods.auto_cad.planner import _distinct_choices

TEXT = "the staff is courteous and friendly ."
TOKENS = tokenize(TEXT)
COURTEOUS = CausalTerm(head=3, phrase=(3,), kind="word")
FRIENDLY = CausalTerm(head=5, phrase=(5,), kind="word")


def replace(tokens, i, new):
    return Edit(tokens[i].start, tokens[i].end, new, tokens[i].text, "replace")


def options(*by_term):
    """Each term's options, best first: (term, [new words])."""
    return [[(replace(TOKENS, t.head, w), t) for w in words] for t, words in by_term]


def chosen_text(opts, a=0, text=TEXT, tokens=TOKENS):
    return apply_edits(text, [e for e, _ in _distinct_choices(opts, a, tokens)])


def test_the_second_term_takes_its_next_option_when_the_best_is_taken():
    opts = options((COURTEOUS, ["rude", "impolite"]), (FRIENDLY, ["rude", "unfriendly"]))
    chosen = _distinct_choices(opts, 0, TOKENS)
    assert [(e.old, e.new) for e, _ in chosen] == [("courteous", "rude"), ("friendly", "unfriendly")]
    assert [t for _, t in chosen] == [COURTEOUS, FRIENDLY]
    assert chosen_text(opts) == "the staff is rude and unfriendly ."


def test_alternative_a_starts_from_each_terms_a_th_option():
    opts = options((COURTEOUS, ["rude", "impolite"]), (FRIENDLY, ["rude", "unfriendly"]))
    assert chosen_text(opts, 1) == "the staff is impolite and unfriendly ."
    # past a term's last option, its last one
    assert chosen_text(opts, 5) == "the staff is impolite and unfriendly ."
    opts = options((COURTEOUS, ["rude", "impolite"]), (FRIENDLY, ["impolite", "rude", "unfriendly"]))
    assert chosen_text(opts, 1) == "the staff is impolite and rude ."


def test_distinct_options_are_kept_as_they_are():
    opts = options((COURTEOUS, ["rude", "impolite"]), (FRIENDLY, ["unfriendly", "rude"]))
    assert chosen_text(opts) == "the staff is rude and unfriendly ."


def test_a_term_without_another_option_keeps_its_only_one():
    opts = options((COURTEOUS, ["rude", "impolite"]), (FRIENDLY, ["rude"]))
    assert chosen_text(opts) == "the staff is rude and rude ."


def test_the_same_word_may_become_the_same_word_again():
    text = "friendly staff and friendly owners ."
    tokens = tokenize(text)
    first, second = (CausalTerm(head=i, phrase=(i,), kind="word") for i in (0, 3))
    opts = [[(replace(tokens, t.head, w), t) for w in ("rude", "unfriendly")] for t in (first, second)]
    assert chosen_text(opts, 0, text, tokens) == "rude staff and rude owners ."


def test_words_of_different_sentences_may_become_the_same_word():
    text = "the staff is courteous . so friendly ."
    tokens = tokenize(text)
    a, b = CausalTerm(head=3, phrase=(3,), kind="word"), CausalTerm(head=6, phrase=(6,), kind="word")
    opts = [[(replace(tokens, t.head, w), t) for w in ("rude", "unfriendly")] for t in (a, b)]
    assert chosen_text(opts, 0, text, tokens) == "the staff is rude . so rude ."



def test_a_negation_takes_no_word_from_the_others():
    # "is not courteous and rude": the inserted negator is no replacement word another term must avoid
    neg = Edit(TOKENS[2].end, TOKENS[2].end, " not", "", "negation-insert")
    opts = [[(neg, COURTEOUS)], [(replace(TOKENS, 5, "rude"), FRIENDLY), (replace(TOKENS, 5, "unfriendly"), FRIENDLY)]]
    chosen = _distinct_choices(opts, 0, TOKENS)
    assert [(e.kind, e.new) for e, _ in chosen] == [("negation-insert", " not"), ("replace", "rude")]
    assert chosen_text(opts) == "the staff is not courteous and rude ."
