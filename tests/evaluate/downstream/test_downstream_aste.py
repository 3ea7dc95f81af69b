"""The ASTE downstream helpers: reading augmented output, span-safe EDA, and seed summaries."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from cfaug.data.aste import AsteExample, Triplet, check_triplets, parse_line
from cfaug.evaluate.downstream.aste import eda_aste, read_augmented, summarize

LINES = [
    "The food was great but the service was really slow .####[([1], [3], 'POS'), ([6], [8, 9], 'NEG')]",
    "The battery life is very long and the bright screen looks lovely .####"
    "[([1, 2], [4, 5], 'POS'), ([9], [8], 'POS'), ([9], [11], 'POS')]",
    "I could n't believe how bad the customer service was at this place .####[([7, 8], [5], 'NEG')]",
    "Our waiter was friendly and the fish tacos were fresh and tasty !####"
    "[([1], [3], 'POS'), ([6, 7], [9], 'POS'), ([6, 7], [11], 'POS')]",
    "Prices are OK for the area , nothing special but fine .####[([0], [2], 'NEU'), ([0], [7, 8], 'NEU')]",
    "The keyboard feels cheap and the trackpad often stops working .####[([1], [3], 'NEG'), ([6], [8, 9], 'NEG')]",
]
EXAMPLES = [parse_line(line, id=str(i)) for i, line in enumerate(LINES, start=1)]
EMPTY = AsteExample(tuple("We went there on a Sunday .".split()), (), id="99")


def term_words(ex):
    return Counter((*t.terms(ex.tokens), t.polarity) for t in ex.triplets)


def test_eda_keeps_terms_intact_and_spans_valid():
    for seed in range(5):
        out = eda_aste(EXAMPLES, n_aug=3, alpha=0.2, seed=seed)
        assert len(out) == 3 * len(EXAMPLES)
        for k, aug in enumerate(out):
            src = EXAMPLES[k // 3]
            assert aug.id == f"eda{src.id}.{k % 3}"
            assert check_triplets(aug.tokens, aug.triplets) is None
            assert len(aug.triplets) == len(src.triplets)
            # the tokens at the new spans are the original term words, with the same polarity
            assert term_words(aug) == term_words(src)
            assert list(aug.triplets) == sorted(aug.triplets)
            # every word still comes from the sentence (insertion copies words of the text)
            assert set(aug.tokens) <= set(src.tokens)


def test_eda_terms_keep_their_relative_spans():
    # a term shared by two triplets points at one place in the new sentence
    for seed in range(5):
        for aug in eda_aste(EXAMPLES[3:4], n_aug=4, seed=seed):
            aspects = {t.aspect for t in aug.triplets if t.terms(aug.tokens)[0] == "fish tacos"}
            assert len(aspects) == 1


def test_eda_changes_most_sentences():
    changed = total = 0
    for seed in range(6):
        for aug in eda_aste(EXAMPLES, n_aug=2, alpha=0.2, seed=seed):
            src = next(e for e in EXAMPLES if aug.id.startswith(f"eda{e.id}."))
            total += 1
            changed += aug.tokens != src.tokens
    assert total == 6 * 2 * len(EXAMPLES)
    assert changed / total > 0.6


def test_eda_is_deterministic_for_a_seed():
    a = eda_aste(EXAMPLES, n_aug=2, seed=3)
    b = eda_aste(EXAMPLES, n_aug=2, seed=3)
    assert [(e.tokens, e.triplets, e.id) for e in a] == [(e.tokens, e.triplets, e.id) for e in b]
    others = [eda_aste(EXAMPLES, n_aug=2, seed=s) for s in (4, 5, 6)]
    assert any([e.tokens for e in o] != [e.tokens for e in a] for o in others)


def test_eda_skips_examples_without_triplets():
    out = eda_aste([EMPTY, EXAMPLES[0]], n_aug=2)
    assert [e.id for e in out] == ["eda1.0", "eda1.1"]
    assert eda_aste([EMPTY]) == []


def test_eda_moves_spans_when_words_are_inserted_before_them():
    # with insertion the tokens before a term change in number: the spans must follow
    ex = EXAMPLES[0]
    moved = 0
    for seed in range(10):
        for aug in eda_aste([ex], n_aug=3, seed=seed):
            if aug.triplets != ex.triplets:
                moved += 1
            assert term_words(aug) == term_words(ex)
    assert moved > 0


def test_read_augmented(tmp_path):
    path = tmp_path / "aug.txt"
    path.write_text(LINES[0] + "\n" + "broken line\n" + "Nice view .####[([1], [5], 'POS')]\n" + LINES[2] + "\n",
                    encoding="utf-8")
    examples, n_bad = read_augmented(path)
    assert n_bad == 2
    assert [e.id for e in examples] == ["1", "4"]
    assert examples[0] == AsteExample(EXAMPLES[0].tokens, EXAMPLES[0].triplets, id="1")
    assert examples[1].triplets == (Triplet((7, 8), (5,), "NEG"),)
    assert examples[1].tokens == EXAMPLES[2].tokens


def test_read_augmented_jsonl(tmp_path):
    path = tmp_path / "aug.jsonl"
    path.write_text('{"id": "a", "text": "good food", "label": "[[[1], [0], \\"positive\\"]]"}\n', encoding="utf-8")
    examples, n_bad = read_augmented(path)
    assert n_bad == 0
    assert examples == [AsteExample(("good", "food"), (Triplet((1,), (0,), "POS"),), id="a")]


def test_summarize():
    mean, std = summarize([{"f1": 0.5}, {"f1": 0.7}, {"f1": 0.6}])
    assert mean == pytest.approx(0.6)
    assert std == pytest.approx(0.1)
    assert summarize([{"f1": 0.4, "precision": 0.9}], key="precision") == (0.9, 0.0)
    mean, std = summarize([])
    assert math.isnan(mean) and math.isnan(std)
    assert summarize([{"f1": "0.25"}, {"f1": 0.75}]) == (0.5, pytest.approx(math.sqrt(0.125)))


def test_eda_keeps_overlapping_terms_apart():
    from cfaug.data.aste import label_sequence, parse_line

    ex = parse_line("The battery life is long and the screen bright .####"
                    "[([1], [4], 'POS'), ([1, 2], [4], 'POS'), ([7], [8], 'POS')]")
    want = label_sequence(ex.tokens, ex.triplets)
    outs = eda_aste([ex], n_aug=6, seed=3)
    assert len(outs) == 6
    for out in outs:
        assert label_sequence(out.tokens, out.triplets) == want
        assert len(out.triplets) == 3


def test_run_seeds_mixes_in_extra_sentences_and_can_fine_tune_on_train(monkeypatch):
    """What each fit of run_seeds sees: train + extra, then (finetune) train alone from those weights."""
    from cfaug.aste import GridTagger
    from cfaug.evaluate.downstream.aste import run_seeds

    fits = []

    def fake_fit(self, data, dev=None, ctx=None, *, warm_start=None):
        fits.append((self.seed, [e.id for e in data], warm_start))
        self.net, self.vocab = object(), object()
        return {}

    monkeypatch.setattr(GridTagger, "fit", fake_fit)
    monkeypatch.setattr(GridTagger, "evaluate", lambda self, ex: {"precision": 1.0, "recall": 2.0, "f1": 1.5})
    train, extra = EXAMPLES[:3], EXAMPLES[3:5]
    runs = run_seeds(train, EXAMPLES, [4], dev=EXAMPLES, extra=extra)
    assert [f[:2] for f in fits] == [(4, ["1", "2", "3", "4", "5"])] and fits[0][2] is None
    assert runs[0]["f1"] == 1.5
    fits.clear()
    run_seeds(train, EXAMPLES, [4, 5], dev=EXAMPLES, extra=extra, finetune=True)
    assert [f[:2] for f in fits] == [(4, ["1", "2", "3", "4", "5"]), (4, ["1", "2", "3"]),
                                     (5, ["1", "2", "3", "4", "5"]), (5, ["1", "2", "3"])]
    assert fits[1][2] is not None and fits[1][2].seed == 4 and fits[0][2] is None
    fits.clear()
    run_seeds(train, EXAMPLES, [4], dev=EXAMPLES, finetune=True)  # nothing to fine-tune from
    assert [f[:2] for f in fits] == [(4, ["1", "2", "3"])]
