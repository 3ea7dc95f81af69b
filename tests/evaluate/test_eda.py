import random
from collections import Counter

import pytest

from cfaug.evaluate.eda import (
    STOP_WORDS,
    eda,
    eda_dataset,
    random_deletion,
    random_insertion,
    random_swap,
    synonym_replacement,
    tokenize,
)

TEXT = "The acting was wonderful, and the plot was clever; I loved this movie."
TOKENS = tokenize(TEXT)
WORDS = [t for t in TOKENS if t[0].isalnum()]
SYN = {"wonderful": ["great", "superb"], "movie": ["film"], "clever": ["smart"], "Loved": ["adored"]}


def test_tokenize_keeps_case_and_punctuation():
    assert tokenize("It's good, REALLY.") == ["It's", "good", ",", "REALLY", "."]
    assert len(WORDS) == 13


def test_determinism_and_seed_dependence():
    a = eda(TEXT, alpha=0.2, n_aug=8, seed=5)
    assert a == eda(TEXT, alpha=0.2, n_aug=8, seed=5)
    assert len(a) == 8
    assert a != eda(TEXT, alpha=0.2, n_aug=8, seed=6)
    assert eda(TEXT, alpha=0.2, n_aug=4, seed=5, synonyms=SYN) == eda(TEXT, alpha=0.2, n_aug=4, seed=5, synonyms=SYN)


def test_outputs_are_single_space_joined():
    for out in eda(TEXT, alpha=0.3, n_aug=10, seed=0):
        assert "  " not in out and out == out.strip()


def test_synonym_replacement():
    out = synonym_replacement(TOKENS, 2, random.Random(0), {k.lower(): v for k, v in SYN.items()})
    changed = [(a, b) for a, b in zip(TOKENS, out) if a != b]
    assert len(out) == len(TOKENS) and len(changed) == 2
    for old, new in changed:
        assert new in {k.lower(): v for k, v in SYN.items()}[old.lower()]
    # every occurrence of a replaced word changes; a word without synonyms never does
    toks = tokenize("good movie , good movie")
    out = synonym_replacement(toks, 5, random.Random(1), {"good": ["fine"]})
    assert out == ["fine", "movie", ",", "fine", "movie"]
    assert synonym_replacement(toks, 5, random.Random(1), {}) == toks


def test_random_insertion_copies_a_content_word_without_synonyms():
    out = random_insertion(TOKENS, 3, random.Random(0))
    assert len(out) == len(TOKENS) + 3
    added = Counter(out) - Counter(TOKENS)
    assert sum(added.values()) == 3
    assert all(w in WORDS and w.lower() not in STOP_WORDS for w in added)
    # only stop words: nothing to insert
    assert random_insertion(["the", "and", "."], 2, random.Random(0)) == ["the", "and", "."]


def test_random_insertion_with_synonyms():
    out = random_insertion(TOKENS, 2, random.Random(0), {"movie": ["film"]})
    assert (Counter(out) - Counter(TOKENS)) == Counter({"film": 2})
    assert random_insertion(["a", "b"], 2, random.Random(0), {"zzz": ["q"]}) == ["a", "b"]


def test_random_swap():
    out = random_swap(TOKENS, 1, random.Random(0))
    diff = [i for i, (a, b) in enumerate(zip(TOKENS, out)) if a != b]
    assert sorted(out) == sorted(TOKENS) and len(diff) == 2
    i, j = diff
    assert (out[i], out[j]) == (TOKENS[j], TOKENS[i])
    assert all(TOKENS[k][0].isalnum() for k in diff)  # punctuation keeps its place
    assert [t for t in random_swap(TOKENS, 4, random.Random(0)) if not t[0].isalnum()] == [",", ";", "."]
    assert random_swap(["alone", "."], 3, random.Random(0)) == ["alone", "."]


def test_random_deletion():
    rng = random.Random(0)
    out = random_deletion(TOKENS, 0.5, rng)
    assert len(out) < len(TOKENS)
    assert [t for t in out if not t[0].isalnum()] == [",", ";", "."]
    it = iter(TOKENS)
    assert all(t in it for t in out)  # an order-preserving subsequence
    assert random_deletion(["only", "."], 0.5, rng) == ["only", "."]
    # p close to 1 deletes everything but one word
    kept = random_deletion(["a", "b", "c", "!"], 0.999999, random.Random(3))
    assert len(kept) == 2 and kept[-1] == "!"


def test_each_operation_is_used_and_sr_only_with_synonyms():
    outs = eda(TEXT, alpha=0.1, n_aug=40, seed=0)
    assert any(len(tokenize(o)) > len(TOKENS) for o in outs)  # insertion
    assert any(len(tokenize(o)) < len(TOKENS) for o in outs)  # deletion
    assert any(len(tokenize(o)) == len(TOKENS) and o != " ".join(TOKENS) for o in outs)  # swap
    assert not any({"great", "superb", "film", "smart", "adored"} & set(tokenize(o)) for o in outs)
    with_syn = eda(TEXT, alpha=0.1, n_aug=40, seed=0, synonyms=SYN)
    assert any({"great", "superb", "film", "smart", "adored"} & set(tokenize(o)) for o in with_syn)


def test_number_of_changes_follows_alpha():
    # 13 words: alpha 0.1 -> 1 change, 0.2 -> 3 (2.6 rounded), 0.5 -> 7 (6.5 rounded half up)
    for alpha, n in [(0.1, 1), (0.2, 3), (0.5, 7)]:
        for out in eda(TEXT, alpha=alpha, n_aug=30, seed=1):
            if len(tokenize(out)) > len(TOKENS):
                assert len(tokenize(out)) == len(TOKENS) + n


def test_alpha_and_n_aug_bounds():
    for bad in (0, -0.1, 0.51, 1.0):
        with pytest.raises(ValueError, match="alpha"):
            eda(TEXT, alpha=bad)
        with pytest.raises(ValueError, match="alpha"):
            eda_dataset([TEXT], ["positive"], alpha=bad)
    assert len(eda(TEXT, alpha=0.5)) == 1
    with pytest.raises(ValueError, match="n_aug"):
        eda(TEXT, n_aug=0)


def test_empty_text():
    assert eda("", n_aug=3) == [""]
    assert eda("  ... !", n_aug=2) == ["  ... !"]


def test_eda_dataset():
    texts, labels = [TEXT, "a dull and boring film .", ""], ["positive", "negative", "neutral"]
    out_t, out_l = eda_dataset(texts, labels, alpha=0.2, n_aug=2, seed=4)
    assert len(out_t) == len(out_l) == 3 + 2 + 2 + 1
    assert out_t[0] == TEXT and out_t[3] == texts[1] and out_t[6] == "" and out_t[7] == ""
    assert out_l == ["positive"] * 3 + ["negative"] * 3 + ["neutral"] * 2
    assert (out_t, out_l) == eda_dataset(texts, labels, alpha=0.2, n_aug=2, seed=4)
    only_aug, only_l = eda_dataset(texts, labels, alpha=0.2, n_aug=2, seed=4, include_original=False)
    assert only_aug == out_t[1:3] + out_t[4:6] + out_t[7:]
    assert only_l == ["positive"] * 2 + ["negative"] * 2 + ["neutral"]
    with pytest.raises(ValueError, match="labels"):
        eda_dataset(texts, labels[:2])
