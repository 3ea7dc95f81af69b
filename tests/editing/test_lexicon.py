from cfaug.editing.lexicon import AUX_AFTER_NT, NEGATORS, STOP_OPINION, Lexicon, load_lexicon


def test_shipped_lexicon():
    lex = load_lexicon()
    assert len(lex.positive) > 1500 and len(lex.negative) > 4000
    assert lex.polarity("Wonderful") == "positive" and lex.polarity("boring") == "negative"
    assert lex.polarity("film") is None
    assert lex.words("positive") is lex.positive and lex.words("negative") is lex.negative


def test_words_that_say_nothing_on_their_own_have_no_polarity():
    lex = load_lexicon()
    assert all(lex.polarity(w) is None for w in STOP_OPINION)


def test_antonym_table_is_symmetric():
    lex = load_lexicon()
    assert "bad" in lex.antonyms["good"] and "good" in lex.antonyms["bad"]
    assert {"awful", "terrible"} <= set(lex.antonyms["great"])
    for word, opposites in lex.antonyms.items():
        for o in opposites:
            assert word in lex.antonyms[o]


def test_user_word_lists(tmp_path):
    pos, neg = tmp_path / "pos.txt", tmp_path / "neg.txt"
    pos.write_text("; a comment line\nSplendid\n\nneat\n", encoding="utf-8")
    neg.write_text("grim\n", encoding="utf-8")
    lex = load_lexicon(str(pos), str(neg))
    assert lex.positive == frozenset({"splendid", "neat"}) and lex.negative == frozenset({"grim"})
    assert Lexicon(frozenset({"ok"}), frozenset()).polarity("OK") == "positive"


def test_negation_edits():
    assert NEGATORS["not"] == "" and NEGATORS["cannot"] == "can" and NEGATORS["without"] == "with"
    assert AUX_AFTER_NT["wo"] == "will" and AUX_AFTER_NT["ca"] == "can"
