"""The GTS grid tagger: tag grids and their decoding (spans, polarity vote), confidences, and a tiny model
that learns a toy dataset, saves, loads and predicts deterministically (nothing is downloaded)."""

import random

import numpy as np
import pytest

from cfaug.aste.grid_tagger import (
    TAGS,
    ContextualVectors,
    GridTagger,
    GridTaggerConfig,
    ScoredTriplet,
    decode_grid,
    tag_grid,
    _pca_init,
    piece_vectors,
    triplet_confidence,
)
from cfaug.data.aste import AsteExample, Triplet
from cfaug.training.context import FitContext

#: the tiny taggers here, the module-scoped one included, train on one torch thread
pytestmark = pytest.mark.usefixtures("one_torch_thread_per_module")

N, A, O, POS, NEU, NEG = range(6)

ASPECTS = ["food", "service", "pizza", "staff", "wine list", "battery life", "sushi", "decor", "waiter", "menu"]
OPINIONS = {"POS": ["great", "delicious", "friendly", "excellent"], "NEG": ["terrible", "rude", "slow", "awful"],
            "NEU": ["average"]}


def _sentence(rng):
    """One toy example: one of a few templates filled with aspects and opinions of known polarity."""
    def pick():
        pol = rng.choice(["POS", "POS", "NEG", "NEG", "NEU"])
        return rng.choice(ASPECTS).split(), rng.choice(OPINIONS[pol]).split(), pol

    kind = rng.randrange(5)
    if kind == 0:
        return ["we", "went", "there", "on", "friday", "."], []
    (a, o, p), (a2, o2, p2) = pick(), pick()
    if kind in (1, 2):  # the <aspect> was <opinion> .
        tokens = ["the"] + a + ["was"] + o + ["."]
        return tokens, [Triplet(tuple(range(1, 1 + len(a))), (1 + len(a) + 1,), p)]
    if kind == 3:  # <opinion> <aspect> !
        return o + a + ["!"], [Triplet(tuple(range(1, 1 + len(a))), (0,), p)]
    if a2 == a:
        return ["the"] + a + ["was"] + o + ["."], [Triplet(tuple(range(1, 1 + len(a))), (1 + len(a) + 1,), p)]
    tokens = ["the"] + a + ["was"] + o + [",", "but", "the"] + a2 + ["was"] + o2
    i2 = len(a) + 6
    return tokens, [Triplet(tuple(range(1, 1 + len(a))), (len(a) + 2,), p),
                    Triplet(tuple(range(i2, i2 + len(a2))), (i2 + len(a2) + 1,), p2)]


def toy(n, seed):
    rng = random.Random(seed)
    out = []
    for k in range(n):
        tokens, triplets = _sentence(rng)
        out.append(AsteExample(tuple(tokens), tuple(sorted(set(triplets))), id=str(k)))
    return out


TINY = dict(embedding_dim=24, char_dim=8, char_filters=16, hidden_size=24, pair_size=24, hops=1, dropout=0.1,
            word_dropout=0.0, tag_weight=1.0, epochs=25, batch_size=8, lr=1e-2, lr_decay=0.0, patience=None,
            init_embeddings=None, frozen_vectors=None, contextual=None)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny tagger fitted on 40 toy sentences (dev: the same sentences) and its facts."""
    train = toy(40, 0)
    folder = tmp_path_factory.mktemp("gts")
    ctx = FitContext(seed=99, progress=False, log=lambda m: None, artifact_dir=folder)
    tagger = GridTagger(GridTaggerConfig(**TINY), seed=3)
    facts = tagger.fit(train, train, ctx)
    return tagger, facts, train, folder


# -- grids and decoding --------------------------------------------------------------------------------
def test_tag_grid_marks_spans_and_pairs_in_the_upper_triangle():
    # "the wine list was great" -- aspect (1, 2), opinion (4,)
    g = tag_grid(5, [Triplet((1, 2), (4,), "POS")])
    assert g[1, 1] == g[1, 2] == g[2, 2] == A
    assert g[4, 4] == O
    assert g[1, 4] == g[2, 4] == POS
    assert g[0, 0] == g[0, 1] == g[3, 3] == N
    assert (g[np.tril_indices(5, -1)] == -1).all()
    # an opinion before its aspect: the pair cell is (opinion, aspect)
    g = tag_grid(3, [Triplet((2,), (0,), "NEG")])
    assert g[0, 2] == NEG and g[2, 2] == A and g[0, 0] == O
    # a triplet past the sentence is left out
    assert (tag_grid(2, [Triplet((1,), (3,), "POS")])[np.triu_indices(2)] == N).all()


@pytest.mark.parametrize("triplets", [
    [Triplet((1, 2), (4,), "POS")],
    [Triplet((3,), (0, 1), "NEG"), Triplet((6,), (8,), "NEU")],
    [Triplet((1,), (3,), "POS"), Triplet((1,), (5,), "POS"), Triplet((7, 8, 9), (5,), "NEG")],
])
def test_decoding_a_gold_grid_gives_back_its_triplets(triplets):
    assert decode_grid(tag_grid(10, triplets)) == sorted(triplets)


def test_polarity_is_the_majority_of_the_pair_cells_ignoring_n():
    g = tag_grid(6, [Triplet((0, 1, 2), (4,), "POS")])
    g[0, 4], g[1, 4], g[2, 4] = NEG, N, POS  # votes: one NEG, one POS, one N -> tie: POS first (GTS)
    assert decode_grid(g) == [Triplet((0, 1, 2), (4,), "POS")]
    g[1, 4] = NEG  # two NEG, one POS
    assert decode_grid(g) == [Triplet((0, 1, 2), (4,), "NEG")]
    g[0, 4], g[1, 4], g[2, 4] = NEU, NEG, N  # NEU-NEG tie: NEG before NEU
    assert decode_grid(g) == [Triplet((0, 1, 2), (4,), "NEG")]
    g[0, 4], g[1, 4], g[2, 4] = N, NEU, A  # a single polarity vote suffices
    assert decode_grid(g) == [Triplet((0, 1, 2), (4,), "NEU")]
    g[1, 4] = N  # no polarity cell: no triplet
    assert decode_grid(g) == []


def test_spans_are_the_runs_of_the_diagonal():
    g = tag_grid(7, [Triplet((0, 1), (3,), "POS"), Triplet((5,), (3,), "NEG")])
    assert decode_grid(g) == [Triplet((0, 1), (3,), "POS"), Triplet((5,), (3,), "NEG")]
    g[1, 1] = N  # token 1 is no longer part of an aspect: the aspect shrinks to token 0
    assert decode_grid(g) == [Triplet((0,), (3,), "POS"), Triplet((5,), (3,), "NEG")]
    g[2, 2] = A  # a one-token aspect with no polarity cell: no triplet
    assert decode_grid(g) == [Triplet((0,), (3,), "POS"), Triplet((5,), (3,), "NEG")]
    g = tag_grid(6, [Triplet((0, 1), (3,), "POS"), Triplet((2,), (3,), "NEG")])
    # adjacent aspects "0 1" and "2" read as one run, as in GTS; its votes: POS, POS, NEG
    assert decode_grid(g) == [Triplet((0, 1, 2), (3,), "POS")]
    assert decode_grid(np.full((4, 4), N)) == []


def test_confidence_is_the_weakest_step():
    t = Triplet((0, 1), (3,), "POS")
    probs = np.zeros((4, 4, len(TAGS)))
    probs[..., N] = 1.0
    probs[0, 0] = probs[1, 1] = 0
    probs[0, 0, A], probs[1, 1, A], probs[3, 3, O] = 0.9, 0.8, 0.95
    probs[0, 3, POS], probs[1, 3, POS] = 0.7, 0.5
    assert triplet_confidence(t, probs) == pytest.approx(0.6)  # the mean of the pair cells
    probs[1, 1, A] = 0.4
    assert triplet_confidence(t, probs) == pytest.approx(0.4)  # the weakest aspect cell


# -- a tiny trained model ------------------------------------------------------------------------------
def test_training_lowers_the_loss_and_fits_the_training_sentences(trained):
    tagger, facts, train, folder = trained
    losses = [h["loss"] for h in facts["history"]]
    assert losses[-1] < 0.5 * losses[0]
    assert facts["epochs"] == TINY["epochs"] and facts["dev"] == "given"
    assert facts["dev_f1"] > 50
    assert tagger.evaluate(train)["f1"] > 50
    assert facts["history"][0]["dev"] < facts["dev_f1"]
    assert facts["vocabulary"] > 10 and facts["parameters"] > 1000
    assert (folder / "checkpoint.pt").exists()


def test_predictions_carry_confidences_from_the_cell_probabilities(trained):
    import torch

    from cfaug.aste.grid_tagger import _collate

    tagger, _, train, _ = trained
    sentences = [e.tokens for e in train[:12]]
    preds = tagger.predict(sentences)
    assert sum(len(p) for p in preds) > 0
    for tokens, pred in zip(sentences, preds):
        enc = tagger.vocab.encode(tokens)
        with torch.no_grad():
            probs = torch.softmax(tagger.net(*_collate([enc], "cpu")), dim=-1)[0].numpy()
        for st in pred:
            assert isinstance(st, ScoredTriplet) and 0.0 <= st.confidence <= 1.0
            assert st.confidence == pytest.approx(triplet_confidence(st.triplet, probs), abs=1e-5)
    assert tagger.extract(sentences) == [tuple(s.triplet for s in p) for p in preds]


def test_input_unlike_the_training_data_gets_lower_confidence(trained):
    tagger, _, train, _ = trained
    seen = [c.confidence for p in tagger.predict([e.tokens for e in train]) for c in p]
    odd = [c.confidence for p in tagger.predict([["the", "zorblax", "was", "quuxy", "."],
                                                 ["the", "food", "food", "was", "was", "great", "great"]])
           for c in p]
    assert np.mean(seen) > 0.5
    assert not odd or np.mean(odd) < np.mean(seen)


def test_save_and_load_give_the_same_predictions(trained, tmp_path):
    tagger, _, train, _ = trained
    sentences = [e.tokens for e in train] + [("a", "brand", "new", "sentence")]
    tagger.save(tmp_path / "model")
    again = GridTagger.load(tmp_path / "model")
    assert again.config == tagger.config and again.seed == tagger.seed
    assert again.predict(sentences) == tagger.predict(sentences)


def test_long_and_empty_sentences(trained):
    tagger, _, _, _ = trained
    long = ["the", "food", "was", "great", "."] * 30  # 150 tokens, cut to max_tokens (100)
    preds = tagger.extract([long, []])
    assert preds[1] == ()
    assert all(t.max_index() < 100 for t in preds[0])


def test_same_seed_same_model_without_a_dev_set():
    train = toy(24, 5)
    config = GridTaggerConfig(**{**TINY, "epochs": 3})
    a, b = GridTagger(config, seed=1), GridTagger(config, seed=1)
    fa, fb = a.fit(train), b.fit(train)
    assert fa["dev"] == "held-out 10% of train" and fa["dev_sentences"] == 2
    assert fa["history"] == fb["history"]
    for (k, va), vb in zip(a.net.state_dict().items(), b.net.state_dict().values()):
        assert np.array_equal(va.numpy(), vb.numpy()), k


def test_warm_start_continues_from_the_given_model_and_leaves_it_unchanged(trained):
    tagger, _, train, _ = trained
    before = {k: v.clone() for k, v in tagger.net.state_dict().items()}
    config = GridTaggerConfig(**{**TINY, "epochs": 1, "lr": 1e-4})
    tuned = GridTagger(config, seed=3)
    facts = tuned.fit(train[:10], train, warm_start=tagger)
    assert facts["warm_start"] and tuned.vocab is tagger.vocab
    for k, v in tagger.net.state_dict().items():
        assert np.array_equal(v.numpy(), before[k].numpy()), k  # the warm start's own weights are untouched
    # one small step from the trained weights: already good, unlike one epoch from new weights
    assert facts["history"][0]["dev"] > 50
    fresh = GridTagger(config, seed=3)
    assert fresh.fit(train[:10], train)["history"][0]["dev"] < facts["history"][0]["dev"]
    # the vocabulary comes from the warm start: a word only the fine-tuning data has is still unknown
    assert "zorblax" not in tuned.vocab.words
    tuned.fit([AsteExample(("the", "zorblax", "was", "great"), (Triplet((1,), (3,), "POS"),))], train,
              warm_start=tagger)
    assert "zorblax" not in tuned.vocab.words


def test_warm_start_needs_the_same_network():
    other = GridTagger(GridTaggerConfig(**{**TINY, "hidden_size": 8}))
    with pytest.raises(RuntimeError, match="fit or load"):
        other.fit(toy(4, 0), warm_start=GridTagger(GridTaggerConfig(**TINY)))
    base = GridTagger(GridTaggerConfig(**{**TINY, "epochs": 1}))
    base.fit(toy(8, 0))
    with pytest.raises(ValueError, match="hidden_size"):
        other.fit(toy(4, 0), warm_start=base)


def test_predict_before_fit_fails():
    with pytest.raises(RuntimeError, match="fit or load"):
        GridTagger().predict([["a"]])


# -- inputs from the packaged encoder ------------------------------------------------------------------
def test_word_piece_vectors_cover_unseen_words_and_initialise_embeddings():
    pieces = piece_vectors("minilm")
    v = pieces.vector("unseenwordxyz")
    assert v.shape == (pieces.dim,) and np.abs(v).sum() > 0
    assert np.array_equal(pieces.vector("unseenwordxyz"), v)
    words = "the food was great but the waiter was rude and slow".split()
    init = _pca_init(np.stack([pieces.vector(w) for w in words]), 6)
    assert init.shape == (11, 6) and init.std() == pytest.approx(1.0, rel=1e-3)
    assert (_pca_init(np.stack([pieces.vector(w) for w in words]), 20)[:, 11:] == 0).all()  # 11 components


def test_contextual_vectors_align_with_tokens():
    cv = ContextualVectors("minilm", layer=2)
    sentences = [["the", "wine-list", "was", "great", "!"], [], ["ok"]]
    out = cv.vectors(sentences)
    assert [o.shape for o in out] == [(5, cv.dim), (0, cv.dim), (1, cv.dim)]
    assert all(np.abs(row).sum() > 0 for row in out[0])
    assert np.array_equal(cv.vectors([sentences[0]])[0], out[0])  # cached


def test_contextual_vectors_do_not_depend_on_the_other_sentences():
    # encoded with longer sentences, in another order, or alone: bit-identical (a padded batch would differ
    # in the last digits, and through the cache a later fit would not repeat an earlier one)
    sentence = ["the", "battery", "life", "is", "great"]
    alone = ContextualVectors("minilm", layer=2).vectors([sentence])[0]
    others = [["word"] * n for n in (3, 9, 20)]
    with_others = ContextualVectors("minilm", layer=2).vectors([*others, sentence])[-1]
    assert np.array_equal(alone, with_others)


def test_packaged_encoder_inputs_train_save_and_load(tmp_path):
    train = toy(16, 2)
    config = GridTaggerConfig(**{**TINY, "epochs": 2, "contextual": "minilm", "contextual_layer": 2,
                                 "frozen_vectors": "minilm", "init_embeddings": "minilm"})
    tagger = GridTagger(config, seed=0)
    assert tagger.fit(train, train)["epochs"] == 2
    sentences = [e.tokens for e in train] + [("an", "unseenword", "here")]
    tagger.save(tmp_path / "model")
    again = GridTagger.load(tmp_path / "model")
    assert again.predict(sentences) == tagger.predict(sentences)


def test_config_is_documented_and_reads_strings():
    from cfaug.config import build_config, describe_params

    assert all(p.help for p in describe_params(GridTaggerConfig))
    c = build_config(GridTaggerConfig, {"contextual": "None", "patience": "none", "lr": "0.01", "hops": "2"})
    assert c.contextual is None and c.patience is None and c.lr == 0.01 and c.hops == 2
