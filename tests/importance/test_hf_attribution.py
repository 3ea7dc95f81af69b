"""Word importance of a Hugging Face sequence classifier given by path: Integrated Gradients over its input
embeddings (word pieces summed per word), and LIME / Shapley through ``predict_proba`` alone."""

from __future__ import annotations

import numpy as np
import pytest

from cfaug.importance import Ensemble, build_word_importance, candidate_words
from cfaug.judges.classifier import HFClassifierJudge

#: a word-piece vocabulary: "wonderful" is read as wonder + ##ful, "isn't" as unknown pieces
PIECES = ("the a an is was it this and but film movie story cast acting plot script . , ! ' "
          "good great brilliant bad awful terrible boring dull wonder ##ful ##s").split()
TEXTS = ["A wonderful film with a brilliant cast.", "It isn't good, the plot is dull and boring!",
         "The story was great but the acting was awful.", "!!!", ""]


@pytest.fixture(scope="module")
def piece_model(tmp_path_factory, make_tiny_bert):
    import torch

    torch.set_num_threads(1)
    folder = make_tiny_bert(tmp_path_factory.mktemp("pieces"), "classifier", words=PIECES, seed=3)
    return HFClassifierJudge(folder, device="cpu")


def test_word_pieces_fall_in_the_words_the_importance_code_uses(piece_model):
    ids, words = piece_model.ids_and_words("A wonderful film, isn't it?")
    assert len(ids) == len(words)
    tokens = piece_model.tokenizer.convert_ids_to_tokens(ids)
    assert tokens[:4] == ["[CLS]", "a", "wonder", "##ful"] and tokens[-1] == "[SEP]"
    assert words[0] == words[-1] == ""  # special tokens belong to no word
    assert words[1:4] == ["a", "wonderful", "wonderful"]
    # "isn't" is one word of cfaug's tokenizer; BERT cuts it into isn / ' / t: all three belong to it
    assert words.count("isn't") == 3 and "isn" not in words and "t" not in words


def test_baseline_keeps_special_tokens_and_pads_the_rest(piece_model):
    import torch

    ids, _ = piece_model.ids_and_words("a wonderful film")
    base = piece_model.baseline_ids(torch.tensor([ids]))[0].tolist()
    tok = piece_model.tokenizer
    assert base[0] == tok.cls_token_id and base[-1] == tok.sep_token_id
    assert set(base[1:-1]) == {tok.pad_token_id}


@pytest.mark.parametrize("column", [0, 1])
def test_integrated_gradients_gives_one_finite_score_per_word(piece_model, column):
    ig = build_word_importance({"@importance": "integrated-gradients", "steps": 8})
    ig.check(piece_model)  # a Hugging Face classifier is one IG can explain
    out = ig.explain(piece_model, TEXTS, [column] * len(TEXTS))
    assert len(out) == len(TEXTS)
    for text, scores in zip(TEXTS, out):
        types = candidate_words(text).types
        assert scores.words == types and scores.scores.shape == (len(types),)
        assert np.isfinite(scores.scores).all()
    assert np.abs(out[0].scores).sum() > 0 and np.abs(out[1].scores).sum() > 0
    assert "isn't" in out[1].words and out[1].scores[out[1].words.index("isn't")] != 0
    assert out[3].words == [] and out[4].words == []


def test_a_words_score_is_the_sum_over_its_pieces(piece_model):
    """The same attribution computed with Captum directly, piece by piece: "wonderful" gets wonder + ##ful."""
    import torch
    from captum.attr import LayerIntegratedGradients

    text = TEXTS[0]
    scores = build_word_importance({"@importance": "integrated-gradients", "steps": 8}).explain(
        piece_model, [text], [1])[0]
    ids, words = piece_model.ids_and_words(text)
    x = torch.tensor([ids])
    lig = LayerIntegratedGradients(lambda i: torch.softmax(piece_model.logits(i), dim=-1), piece_model.embedding)
    per_piece = lig.attribute(x, baselines=piece_model.baseline_ids(x), target=1, n_steps=8,
                              internal_batch_size=8).sum(dim=-1)[0].detach().numpy()
    pieces = [i for i, w in enumerate(words) if w == "wonderful"]
    assert len(pieces) == 2
    got = scores.scores[scores.words.index("wonderful")]
    assert got == pytest.approx(float(per_piece[pieces].sum()), rel=1e-4, abs=1e-7)
    # completeness: the pieces' attributions add up to the change of the probability from the baseline
    with torch.no_grad():
        p = torch.softmax(piece_model.logits(x), -1)[0, 1] - torch.softmax(
            piece_model.logits(piece_model.baseline_ids(x)), -1)[0, 1]
    assert abs(float(per_piece.sum()) - float(p)) < 0.05


def test_lime_shapley_and_ig_vote_with_a_hugging_face_classifier(piece_model):
    methods = [build_word_importance({"@importance": "lime", "samples": 20}),
               build_word_importance({"@importance": "integrated-gradients", "steps": 4}),
               build_word_importance({"@importance": "shapley", "samples": 1})]
    ens = Ensemble({"hf": piece_model}, methods, k=2)
    tops = ens.top_words(TEXTS[:3], ["positive", "negative", "negative"])
    assert [sorted(t) for t in tops] == [["hf/integrated-gradients", "hf/lime", "hf/shapley"]] * 3
    for text, top in zip(TEXTS, tops):
        types = set(candidate_words(text).types)
        assert all(len(words) <= 2 and set(words) <= types for words in top.values())
