"""Delexicalised generation: placeholders for the label's terms in the condition and the sentence, terms put
back after decoding, and a generator that learns, saves and reloads it."""

from __future__ import annotations

import pytest

from cfaug.methods.t2s.delex import (MAX_TERMS, delexicalise_condition, delexicalise_sentence, fill,
                                     split_condition)
from cfaug.methods.t2s.generator import Generator, GeneratorShape, condition_text

TEMPLATE = "root [ nsubj [ det ] cop punct ]"


def test_split_condition():
    triplets, template = split_condition("food | great | positive ; staff | rude | negative ; " + TEMPLATE)
    assert triplets == [["food", "great", "positive"], ["staff", "rude", "negative"]]
    assert template == TEMPLATE


def test_condition_terms_become_placeholders_shared_by_repeated_terms():
    cond, terms = delexicalise_condition(
        "battery life | great | positive ; battery life | short | negative ; screen | great | positive ; " + TEMPLATE)
    assert cond == ("<a0> | <o0> | positive ; <a0> | <o1> | negative ; <a1> | <o0> | positive ; " + TEMPLATE)
    assert terms == {"<a0>": "battery life", "<o0>": "great", "<o1>": "short", "<a1>": "screen"}


def test_a_condition_without_triplets_is_left_alone():
    assert delexicalise_condition("just some words") == ("just some words", {})


def test_terms_beyond_the_placeholders_stay_words():
    cond, terms = delexicalise_condition(" ; ".join(f"a{k} | good | positive" for k in range(MAX_TERMS + 2))
                                         + " ; " + TEMPLATE)
    assert len([s for s in terms if s.startswith("<a")]) == MAX_TERMS
    assert f"a{MAX_TERMS} | <o0> | positive" in cond


def test_sentence_longer_terms_first_and_every_occurrence():
    terms = {"<a0>": "battery", "<a1>": "battery life", "<o0>": "great"}
    assert delexicalise_sentence("the battery life is great and the battery is great", terms) == \
        "the <a1> is <o0> and the <a0> is <o0>"
    # a term that is not in the sentence changes nothing
    assert delexicalise_sentence("nice place", terms) == "nice place"


def test_fill_puts_terms_back_and_drops_unknown_placeholders():
    terms = {"<a0>": "battery life", "<o0>": "great"}
    assert fill("the <a0> is <o0> <a3> .", terms) == "the battery life is great ."
    sentence = "the battery life is great ."
    assert fill(delexicalise_sentence(sentence, terms), terms) == sentence


def _pairs():
    aspects = ["food", "service", "battery life", "keyboard", "wine list", "screen"]
    opinions = ["great", "slow", "amazing", "noisy"]
    out = []
    for a in aspects:
        for o in opinions:
            out.append((condition_text(f"{a} | {o} | positive", TEMPLATE), f"the {a} is {o} ."))
    return out


def test_generator_learns_placeholders_and_writes_unseen_terms(tmp_path):
    import torch

    data = _pairs()
    gen = Generator.from_scratch([t for p in data for t in p], GeneratorShape(d_model=32, d_ff=64, layers=1, heads=2),
                                 seed=0, delexicalise=True, max_target=12)
    assert "<a0>" in gen.tokenizer.get_vocab() and "<o0>" in gen.tokenizer.get_vocab()
    opt = torch.optim.Adam(gen.model.parameters(), lr=1e-2)
    gen.model.train()
    for _ in range(60):
        opt.zero_grad()
        loss = gen.loss([c for c, _ in data], [s for _, s in data])
        loss.backward()
        opt.step()
    assert loss.detach().item() < 0.5
    # a term the generator never saw is written, since only its placeholder is generated
    cond = condition_text("touchpad | flimsy | negative", TEMPLATE)
    out = gen.generate([cond], max_new_tokens=12, no_repeat_ngram=3)
    assert "touchpad" in out[0].split() and "flimsy" in out[0].split(), out
    gen.save(tmp_path / "g")
    again = Generator.load(tmp_path / "g")
    assert again.delexicalise
    assert again.generate([cond], max_new_tokens=12) == gen.generate([cond], max_new_tokens=12)
    with pytest.raises(ValueError, match="conditions"):
        again.decode(torch.tensor([[5, 6, 1]]))


def test_no_repeat_ngram_blocks_repeated_trigrams():
    data = _pairs()
    gen = Generator.from_scratch([t for p in data for t in p], GeneratorShape(d_model=16, d_ff=32, layers=1, heads=2),
                                 seed=1, max_target=30)
    conds = [c for c, _ in data[:8]]
    for sentence in gen.generate(conds, max_new_tokens=30, no_repeat_ngram=3):
        words = sentence.split()
        grams = [tuple(words[i:i + 3]) for i in range(len(words) - 2)]
        assert len(grams) == len(set(grams)), sentence
