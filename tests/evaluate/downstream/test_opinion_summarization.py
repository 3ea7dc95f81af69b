"""The opinion-summarization test: reading gold-summary sets, the summarizer, and sentiment precision."""

from __future__ import annotations

import pytest
import torch

from cfaug.data.io import DataError
from cfaug.evaluate.downstream.opinion_summarization import Group, polarity_credit, read_groups, score_summaries
from cfaug.evaluate.downstream.summarizer import (SummarizerSettings, load_summarizer, summarize,
                                                  train_summarizer)
from cfaug.training.context import FitContext

#: the tiny summarizers here, the module-scoped one included, train on one torch thread
pytestmark = pytest.mark.usefixtures("one_torch_thread_per_module")


def test_read_meansum_and_fewsum_layouts(tmp_path):
    meansum = tmp_path / "dev.csv"
    meansum.write_text("Input.business_id,Input.original_review_0,Input.original_review_1,Answer.summary,"
                       "Input.original_review_0_id\nb1,Great tacos.,Rude staff.,Good tacos but rude staff.,r0\n"
                       "b2,,,,r1\n")
    groups = read_groups(meansum)
    assert [(g.id, g.reviews, g.references) for g in groups] == [
        ("b1", ["Great tacos.", "Rude staff."], ["Good tacos but rude staff."])]  # the empty row is skipped
    fewsum = tmp_path / "train.csv"
    fewsum.write_text("cat\tgroup_id\trev1\trev2\tsumm1\tsumm2\nfood\tg7\tA.\tB.\tS1.\tS2.\n")
    assert [(g.id, g.reviews, g.references) for g in read_groups(fewsum)] == [("g7", ["A.", "B."], ["S1.", "S2."])]
    other = tmp_path / "x.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="x.csv: not a MeanSum"):
        read_groups(other)


def test_polarity_credit_has_a_neutral_band():
    assert polarity_credit(0.1, negative_group=True) == 1.0
    assert polarity_credit(0.9, negative_group=True) == 0.0
    assert polarity_credit(0.55, negative_group=True) == 0.5
    assert polarity_credit(0.9, negative_group=False) == 1.0


def words_classifier(texts):
    return [0.1 if ("bad" in t or "rude" in t) else 0.9 for t in texts]


def test_score_summaries_per_polarity_and_level():
    groups = [Group("n1", ["x"], ["the food was bad ."]), Group("n2", ["x"], ["rude staff ."]),
              Group("p1", ["x"], ["great food ."])]
    summaries = [["the food was bad ."], ["the food was great .", "rude staff ."], ["great food ."]]
    out = score_summaries(groups, summaries, words_classifier)
    assert out["groups"] == 3 and out["negative_groups"] == 2
    # n1: summary negative (1); n2: the joined summary holds "rude" (1); sentences: 1 and (0 + 1) / 2
    assert out["negative_precision_summary"] == 100.0 and out["negative_precision_sentence"] == 75.0
    assert out["positive_precision_summary"] == 100.0 and out["positive_precision_sentence"] == 100.0
    assert out["rouge1"] > 50 and 0 <= out["rouge2"] <= out["rouge1"]
    with pytest.raises(ValueError, match="3 groups but 2"):
        score_summaries(groups, summaries[:2], words_classifier)


SENTENCES = [f"the {w} was {a} ." for w in ("pizza", "soup", "staff", "room", "pasta", "menu")
             for a in ("good", "great", "bad", "awful")]
TINY = SummarizerSettings(embedding_dim=16, hidden_size=32, latent=8, dropout=0.0, epochs=200, batch_size=24, lr=1e-2,
                          kl_anneal_steps=20, free_bits=8.0, min_count=1)


@pytest.fixture(scope="module")
def summarizer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("summarizer")
    model, vocab, facts = train_summarizer(SENTENCES, FitContext(artifact_dir=folder, progress=False), TINY)
    return folder, model, vocab, facts


def test_summarizer_trains_saves_and_loads(summarizer):
    folder, model, vocab, facts = summarizer
    assert facts["texts"] == 24 and facts["epochs"] == 200 and facts["final_loss"] > 0
    loaded, loaded_vocab = load_summarizer(folder)
    assert loaded_vocab.words == vocab.words
    for k, v in loaded.state_dict().items():
        if k != "steps":
            assert torch.equal(v, model.state_dict()[k]), k


def test_summaries_read_as_the_training_sentences_and_are_deterministic(summarizer):
    _, model, vocab, _ = summarizer
    reviews = ["The pizza was good. The soup was great.", "The staff was good."]
    first = summarize(model, vocab, reviews, sentences=2, beam=2)
    assert 1 <= len(first) <= 2 and all(s.startswith("the ") and s.endswith(".") for s in first)
    assert summarize(model, vocab, reviews, sentences=2, beam=2) == first
    assert summarize(model, vocab, [], sentences=2) == []
    # what it writes reads like its training sentences (quality is the benchmark's business)
    known = {x.replace(" .", ".") for x in SENTENCES}
    assert all(x in known for x in first + summarize(model, vocab, ["the soup was awful ."], sentences=1, beam=2))


def test_kl_weight_zero_is_a_plain_autoencoder_and_its_sentences_keep_their_sentiment(tmp_path):
    settings = SummarizerSettings(embedding_dim=16, hidden_size=32, latent=8, dropout=0.0, epochs=120, batch_size=24,
                                  lr=1e-2, kl_weight=0.0, min_count=1)
    model, vocab, _ = train_summarizer(SENTENCES, FitContext(artifact_dir=tmp_path, progress=False), settings)
    ids = torch.tensor([vocab.encode("the soup was awful .")])
    loss_a, _ = model.loss(ids, 0.0, 0.0, sample=False)
    loss_b, _ = model.loss(ids, 0.0, 0.0, sample=False)
    assert torch.equal(loss_a, loss_b)  # no sampling: the same loss twice
    # the latent holds the whole sentence: one-sentence groups come back as themselves, sentiment word included
    for text in ("the soup was awful .", "the room was great .", "the menu was bad ."):
        assert summarize(model, vocab, [text], sentences=1, beam=2) == [text.replace(" .", ".")]


class _LookupModel(torch.nn.Module):
    """A stand-in summarizer: sentence i of ``texts`` encodes to the i-th unit vector, a unit vector decodes
    back to its sentence and any other code (a mean of several) decodes to ``other``."""

    def __init__(self, vocab, texts, other):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.vocab, self.other = vocab, vocab.encode(other)
        self.ids = [vocab.encode(t) for t in texts]

    def encode(self, ids):
        rows = [[i for i in row if i != 0] for row in ids.tolist()]
        mu = torch.stack([torch.nn.functional.one_hot(torch.tensor(self.ids.index(r)), len(self.ids)).float()
                          for r in rows])
        return mu, torch.zeros_like(mu)

    def generate(self, z, max_tokens=40, beam=1):
        return [self.ids[int(row.argmax())] if float(row.max()) == 1.0 else self.other for row in z]


def test_overlap_selection_keeps_the_candidate_closest_to_the_reviews():
    from cfaug.seq2seq.vocab import WordVocab

    texts = ["the soup was awful .", "the soup was bad .", "the staff was rude and the soup was cold ."]
    vocab = WordVocab.build(texts + ["a fine menu"], min_count=1)
    model = _LookupModel(vocab, texts, "a fine menu")
    # one cluster of three: the centroid decodes to the unrelated sentence, which shares no word with the reviews
    assert summarize(model, vocab, texts, sentences=1) == ["a fine menu"]
    # Coop's search also decodes each single review's code and keeps the one with most words in common
    # with the group: the third sentence shares all its 10 tokens with it (unigram F1 2*10/30), the others 5
    closest = ["the staff was rude and the soup was cold."]
    assert summarize(model, vocab, texts, sentences=1, select="overlap") == closest
    # subsets of two are means again, so they decode to the unrelated sentence and lose
    assert summarize(model, vocab, texts, sentences=1, select="overlap", subset_size=2) == closest
    # a one-sentence group has only its centroid, which is the sentence itself
    assert summarize(model, vocab, texts[:1], sentences=3, select="overlap") == ["the soup was awful."]
    with pytest.raises(ValueError, match="select must be one of"):
        summarize(model, vocab, texts, select="best")
    with pytest.raises(ValueError, match="subset_size must be at least 1"):
        summarize(model, vocab, texts, select="overlap", subset_size=0)


def test_run_summarization_test_trains_one_summarizer_per_condition_and_seed(tmp_path):
    from dataclasses import replace

    from cfaug.evaluate.downstream.opinion_summarization import run_summarization_test, summarization_table

    groups = [Group("n", ["The soup was awful. The menu was bad."], ["the food was bad ."]),
              Group("p", ["The pizza was great."], ["the food was great ."])]
    positive = [s for s in SENTENCES if "good" in s or "great" in s]
    conditions = [("skewed", positive), ("skewed + negatives", SENTENCES)]
    seen = []
    result = run_summarization_test(conditions, groups, words_classifier, tmp_path, seeds=(0, 1),
                                    settings=replace(TINY, epochs=5), log=seen.append)
    assert [r["texts"] for r in result["conditions"].values()] == [12, 24]
    assert sorted(p.parent.name + "/" + p.name for p in tmp_path.glob("*/*")) == ["0/seed0", "0/seed1", "1/seed0",
                                                                                  "1/seed1"]
    assert len(seen) == 4 and "skewed + negatives: training the summarizer on 24 texts (seed 1)" in seen[-1]
    row = result["conditions"]["skewed + negatives"]
    assert len(row["runs"]) == 2 and set(row["mean"]) == {"negative_precision_summary", "negative_precision_sentence",
                                                          "positive_precision_summary", "positive_precision_sentence",
                                                          "rouge1", "rouge2", "rougeL"}
    table = summarization_table(result)
    assert "| skewed + negatives | 24 |" in table and "2 groups (1 negative" in table
    with pytest.raises(ValueError, match="at least one condition"):
        run_summarization_test([], groups, words_classifier, tmp_path)
