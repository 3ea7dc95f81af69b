"""Dis-AE learns to separate sentiment from content: on toy pairs whose optimum is known, the content of
one review with the sentiment of another decodes to the first review with the other's sentiment."""

from __future__ import annotations

import math

import pytest
import torch

from cfaug.methods.lass.disae import DisAE, DisAEConfig, LossWeights, annealed_weights
from cfaug.seq2seq.vocab import EOS, PAD, WordVocab

NOUNS = ["pizza", "soup", "service", "staff", "pasta", "room", "screen", "battery", "keyboard", "price"]
PAIRS = [p for n in NOUNS for p in ((f"the {n} was good .", f"the {n} was bad ."),
                                    (f"i loved the {n} .", f"i hated the {n} ."))]


def pad(seqs):
    width = max(map(len, seqs))
    return torch.tensor([s + [PAD] * (width - len(s)) for s in seqs])


@pytest.fixture(scope="module")
def vocab():
    return WordVocab.build([t for p in PAIRS for t in p], min_count=1)


def batch(vocab, pairs=PAIRS):
    pos = pad([vocab.encode(p) for p, _ in pairs])
    neg = pad([vocab.encode(n) for _, n in pairs])
    return pos, neg, torch.ones(len(pairs), dtype=torch.long), torch.zeros(len(pairs), dtype=torch.long)


def tiny(vocab, seed=0):
    torch.manual_seed(seed)
    return DisAE(DisAEConfig(len(vocab), embedding_dim=32, hidden_size=64, latent=32, dropout=0.0))


@pytest.fixture(scope="module")
def trained(vocab):
    model = tiny(vocab)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = batch(vocab)
    history = []
    for step in range(100):
        loss, parts = model.loss(*data, annealed_weights(step, 40, LossWeights()))
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(parts)
    return model.eval(), history


def test_every_term_of_the_objective(vocab):
    model = tiny(vocab)
    data = batch(vocab)
    parts = {k: v.detach() for k, v in model.losses(*data).items()}
    assert set(parts) == {"rec", "emo", "e", "n", "r", "dis", "cf"}
    assert all(math.isfinite(float(v)) for v in parts.values())
    assert 0.0 <= float(parts["dis"]) <= 4.0  # 2 + cos - cos
    assert float(parts["emo"]) == pytest.approx(float(parts["e"] + parts["n"] + parts["r"]), rel=1e-6)
    w = LossWeights(alpha=0.5, beta=2.0, gamma=3.0)
    total, logged = model.loss(*data, w)
    expected = logged["rec"] + 0.5 * logged["emo"] + 2.0 * logged["dis"] + 3.0 * logged["cf"]
    assert float(total.detach()) == pytest.approx(expected, rel=1e-5)


def test_weights_anneal_from_zero_to_their_limits():
    limits = LossWeights(alpha=5.0, beta=1.0, gamma=1.0)
    assert annealed_weights(0, 100, limits) == LossWeights(0.0, 0.0, 0.0)
    assert annealed_weights(50, 100, limits) == LossWeights(2.5, 0.5, 0.5)
    assert annealed_weights(500, 100, limits) == limits
    assert annealed_weights(0, 0, limits) == limits


def test_training_lowers_every_loss(trained):
    _, history = trained
    for term in ("rec", "cf", "e", "dis"):
        assert history[-1][term] < 0.1 * history[0][term], term


@pytest.mark.parametrize("beam", [1, 4])
def test_content_of_one_text_with_the_sentiment_of_another(trained, vocab, beam):
    model, _ = trained
    content = pad([vocab.encode("the pizza was good ."), vocab.encode("i loved the battery .")])
    sentiment = pad([vocab.encode("the soup was bad ."), vocab.encode("the staff was bad .")])
    out = [vocab.decode(ids) for ids in model.generate(model.transfer(content, sentiment), beam=beam)]
    assert out == ["the pizza was bad.", "i hated the battery."]
    back = [vocab.decode(ids) for ids in model.generate(model.transfer(sentiment, content), beam=beam)]
    assert back == ["the soup was good.", "the staff was good."]


def test_generation_stops_at_the_token_limit(vocab):
    model = tiny(vocab).eval()
    z = torch.zeros(3, 2 * model.config.latent)
    for beam in (1, 2):
        out = model.generate(z, max_tokens=4, beam=beam)
        assert len(out) == 3 and all(len(ids) <= 4 and EOS not in ids for ids in out)


def test_beam_rows_decoded_together_equal_rows_decoded_alone(vocab):
    model = tiny(vocab, seed=3).eval()
    torch.manual_seed(1)
    z = torch.randn(5, 2 * model.config.latent) * 3
    together = model.generate(z, max_tokens=8, beam=3)
    alone = [model.generate(z[i: i + 1], max_tokens=8, beam=3)[0] for i in range(5)]
    assert together == alone
    assert all(len(ids) <= 8 and EOS not in ids for ids in together)
    # a wider beam never finds a less probable best hypothesis than greedy decoding does for these rows
    greedy = model.generate(z, max_tokens=8)

    def per_token_logp(row, ids):
        seq = torch.tensor([ids + [EOS]])
        logits = model.decode_logits(z[row: row + 1], seq)
        return float(logits.log_softmax(-1).gather(-1, seq.unsqueeze(-1)).sum()) / seq.shape[1]

    for r in range(5):
        if len(greedy[r]) < 8 and len(together[r]) < 8:  # both ended with EOS within the limit
            assert per_token_logp(r, together[r]) >= per_token_logp(r, greedy[r]) - 1e-4


@pytest.mark.parametrize("beam", [1, 3])
def test_rows_that_finish_early_leave_the_batch_without_changing_the_others(trained, vocab, beam):
    model, _ = trained
    pos, neg, _, _ = batch(vocab, PAIRS[:4])
    torch.manual_seed(2)
    # codes of real reviews end after a few words; random codes run to the token limit
    z = torch.cat([model.transfer(pos, neg), torch.randn(4, 2 * model.config.latent) * 3])[[0, 4, 1, 5, 2, 6, 3, 7]]
    together = model.generate(z, max_tokens=12, beam=beam)
    alone = [model.generate(z[i: i + 1], max_tokens=12, beam=beam)[0] for i in range(8)]
    assert together == alone
    assert len({len(ids) for ids in together}) > 1  # the rows did finish at different steps


def test_sampling_is_seeded_per_row_and_varies_with_the_seed(vocab):
    model = tiny(vocab, seed=3).eval()
    torch.manual_seed(1)
    z = torch.randn(6, 2 * model.config.latent)
    seeds = [11, 12, 13, 14, 15, 16]
    together = model.generate(z, max_tokens=8, temperature=1.0, top_p=1.0, seeds=seeds)
    # a row's text depends on its own seed only, not on the rows decoded beside it or the global RNG
    torch.manual_seed(99)
    alone = [model.generate(z[i: i + 1], max_tokens=8, temperature=1.0, top_p=1.0, seeds=[seeds[i]])[0]
             for i in range(6)]
    assert together == alone
    assert all(len(ids) <= 8 and EOS not in ids for ids in together)
    # an untrained decoder's distribution is nearly flat: other seeds give other texts, unlike greedy decoding
    other = model.generate(z, max_tokens=8, temperature=1.0, top_p=1.0, seeds=[s + 100 for s in seeds])
    assert other != together
    with pytest.raises(ValueError, match="2 seeds for 6 rows"):
        model.generate(z, temperature=1.0, seeds=[1, 2])


def test_a_tiny_nucleus_samples_the_greedy_text(trained, vocab):
    model, _ = trained
    pos, neg, _, _ = batch(vocab, PAIRS[:6])
    z = model.transfer(pos, neg)
    greedy = model.generate(z, max_tokens=10)
    assert model.generate(z, max_tokens=10, temperature=1.0, top_p=0.01, seeds=list(range(6))) == greedy
    # on the trained toy pairs the sentiment word is near-certain: sampling at a low temperature keeps the transfer
    sampled = [vocab.decode(ids) for ids in model.generate(z, max_tokens=10, temperature=0.3, top_p=0.9,
                                                           seeds=list(range(6)))]
    assert sampled == [vocab.decode(ids) for ids in greedy]
