import csv
import re
from pathlib import Path

import numpy as np
import pytest

from cfaug.evaluate.bias import (
    TEMPLATE_MALE_WORDS,
    MaskedLMScorer,
    _shared_positions,
    crows_pairs_score,
    gender_gap,
    parse_choices,
    stereoset_score,
    template_sentences,
)

SWAP = {"he": "she", "him": "her", "his": "her", "man": "woman", "brother": "sister", "father": "mother",
        "son": "daughter", "uncle": "aunt"}


def swap(text: str) -> str:
    return re.sub(r"\w+", lambda m: SWAP.get(m.group(0).lower(), m.group(0)), text)


class FakeSentiment:
    """P(positive) = 0.9 for texts with 'good', else 0.3; 0.2 less when the text says 'she'."""

    labels = ("negative", "positive")

    def __init__(self) -> None:
        self.calls: list[int] = []

    def predict_proba(self, inputs):
        self.calls.append(len(inputs))
        pos = np.array([(0.9 if "good" in t else 0.3) - (0.2 if "she" in t.split() else 0.0) for t in inputs])
        return np.stack([1 - pos, pos], axis=1)


def test_gender_gap_hand_computed():
    model = FakeSentiment()
    texts = ["he is good", "he is bad", "the film is good", "he was fine"]
    gap = gender_gap(model, texts, swap, "positive")
    assert (gap.n, gap.skipped) == (3, 1)
    assert model.calls == [3, 3]  # batched: originals once, swaps once
    assert gap.differences == pytest.approx([0.2, 0.2, 0.2])
    assert gap.mean_abs_diff == pytest.approx(0.2)
    assert gap.mean_signed_diff == pytest.approx(0.2)
    # "he is good" 0.9 -> 0.7 stays positive; "he is bad" 0.3 -> 0.1 stays negative
    assert gap.prediction_change_rate == 0.0
    assert gap.facts()["skipped_unchanged_by_swap"] == 1


def test_gender_gap_prediction_change_and_sign():
    class Flipper(FakeSentiment):
        def predict_proba(self, inputs):
            pos = np.array([0.6 if "she" in t.split() else 0.4 for t in inputs])
            return np.stack([1 - pos, pos], axis=1)

    gap = gender_gap(Flipper(), ["he is here", "he left"], swap, "positive")
    assert gap.mean_signed_diff == pytest.approx(-0.2)
    assert gap.mean_abs_diff == pytest.approx(0.2)
    assert gap.prediction_change_rate == 1.0


def test_gender_gap_nothing_to_compare_and_errors():
    model = FakeSentiment()
    gap = gender_gap(model, ["a film", "it is good"], swap, "positive")
    assert (gap.n, gap.skipped, gap.mean_abs_diff) == (0, 2, None)
    assert model.calls == []
    with pytest.raises(ValueError, match="neutral"):
        gender_gap(model, ["he"], swap, "neutral")

    class Bad(FakeSentiment):
        def predict_proba(self, inputs):
            return np.zeros((len(inputs), 3))

    with pytest.raises(ValueError, match="shape"):
        gender_gap(Bad(), ["he"], swap, "positive")


def test_template_sentences():
    sents = template_sentences()
    assert len(sents) == 100 == len(set(sents))
    for s in sents:
        assert TEMPLATE_MALE_WORDS & set(re.findall(r"\w+", s.lower())), s
        assert swap(s) != s
    assert "He is an engineer." in sents and "He is a doctor." in sents
    gap = gender_gap(FakeSentiment(), sents, swap, "positive")
    assert (gap.n, gap.skipped) == (100, 0)


# ------------------------------------------------------------------ masked LM benchmarks

CROWS = [  # sent_more, sent_less, direction, bias type
    ("he is a doctor .", "she is a doctor .", "stereo", "gender"),
    ("she is a nurse .", "he is a nurse .", "stereo", "gender"),
    ("the man can not cook .", "the woman can not cook .", "antistereo", "gender"),
    ("his mother is a nurse .", "his father is a nurse .", "stereo", "gender"),
    ("the rich man is lazy .", "the poor man is lazy .", "antistereo", "socioeconomic"),
]
STEREO = [  # prompt, [stereotype, anti-stereotype, unrelated], bias type
    ("the nurse was BLANK .", "['kind' 'rude' 'table']", "profession"),
    ("the man is BLANK .", "['strong' 'weak' 'table']", "gender"),
    ("she is very BLANK .", "['kind' 'strong' 'cook']", "gender"),
    ("the doctor is BLANK .", "['rich' 'poor' 'table']", "profession"),
    ("his mother is BLANK .", "['kind' \"rude\" 'table']", "gender"),
]


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 2-layer BertForMaskedLM with a WordPiece vocabulary of the test sentences' words."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    path = tmp_path_factory.mktemp("tiny_mlm")
    words = sorted({w for row in CROWS for s in row[:2] for w in s.split()}
                   | {w for p, c, _ in STEREO for w in p.split() + parse_choices(c)} - {"BLANK"})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizer(str(path / "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    BertForMaskedLM(cfg).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def crows_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crows") / "crows.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["", "sent_more", "sent_less", "stereo_antistereo", "bias_type", "annotations"])
        for i, row in enumerate(CROWS):
            w.writerow([i, *row, "[]"])
    return path


@pytest.fixture(scope="module")
def stereo_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stereoset") / "intrasentence.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["prompt", "choices", "bias_type", "target"])
        for prompt, choices, bias in STEREO:
            w.writerow([prompt, choices, bias, "x"])
    return path


def test_parse_choices():
    assert parse_choices("['asian' 'hispanic' 'fox']") == ["asian", "hispanic", "fox"]
    assert parse_choices("['kind' \"don't\" 'x']") == ["kind", "don't", "x"]
    assert parse_choices("['a', 'b', 'c']") == ["a", "b", "c"]


def test_shared_positions():
    a, b = [2, 10, 11, 12, 3], [2, 10, 13, 12, 3]
    assert _shared_positions(a, b) == ([0, 1, 3, 4], [0, 1, 3, 4])
    assert _shared_positions([2, 5, 6, 3], [2, 5, 9, 9, 6, 3]) == ([0, 1, 2, 3], [0, 1, 4, 5])


def test_masked_lm_scorer_pll(tiny_mlm):
    lm = MaskedLMScorer(tiny_mlm)
    ids = lm.ids("he is a doctor .")
    assert len(ids) == 7 and lm.content_positions(ids) == [1, 2, 3, 4, 5]
    total, n = lm.pll("he is a doctor .")
    assert n == 5 and total < 0
    # batching does not change the numbers
    small = MaskedLMScorer(tiny_mlm, batch_size=2)
    expected = lm.masked_log_probs(ids, [1, 2, 3, 4, 5])
    assert small.masked_log_probs(ids, [1, 2, 3, 4, 5]) == pytest.approx(expected, abs=1e-5)


def test_crows_pairs_score(tiny_mlm, crows_csv):
    r = crows_pairs_score(tiny_mlm, crows_csv)
    assert r.metric == "crows_pairs" and r.n == 4 and len(r.per_item) == 4
    assert 0.0 <= r.score <= 100.0
    assert r.score == pytest.approx(100.0 * sum(r.per_item) / 4)
    assert r.details["n_stereo"] + r.details["n_antistereo"] + r.details["ties"] == 4
    assert r.settings["bias_type"] == "gender" and r.facts()["n"] == 4
    assert crows_pairs_score(tiny_mlm, crows_csv, bias_type=None).n == 5
    limited = crows_pairs_score(tiny_mlm, crows_csv, limit=2)
    assert limited.n == 2 and limited.per_item == r.per_item[:2]


def test_crows_pairs_errors(tiny_mlm, crows_csv, tmp_path):
    with pytest.raises(ValueError, match="no-such-model"):
        crows_pairs_score(tmp_path / "no-such-model", crows_csv)
    with pytest.raises(ValueError, match="religion"):
        crows_pairs_score(tiny_mlm, crows_csv, bias_type="religion")
    with pytest.raises(ValueError, match="limit"):
        crows_pairs_score(tiny_mlm, crows_csv, limit=0)
    with pytest.raises(ValueError, match="missing.csv"):
        crows_pairs_score(tiny_mlm, tmp_path / "missing.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("sent_more,bias_type\na,gender\n", encoding="utf-8")
    with pytest.raises(ValueError, match="sent_less"):
        crows_pairs_score(tiny_mlm, bad)


def test_stereoset_score(tiny_mlm, stereo_csv, tmp_path):
    r = stereoset_score(tiny_mlm, stereo_csv)
    assert r.metric == "stereoset_ss" and r.n == 5 and len(r.per_item) == 5
    assert 0.0 <= r.score <= 100.0 and 0.0 <= r.details["lm_score"] <= 100.0
    assert r.details["icat"] == pytest.approx(r.details["lm_score"] * min(r.score, 100 - r.score) / 50)
    assert stereoset_score(tiny_mlm, stereo_csv, limit=3).per_item == r.per_item[:3]
    assert stereoset_score(tiny_mlm, stereo_csv, bias_type="gender").n == 3
    with pytest.raises(ValueError, match="nowhere"):
        stereoset_score(tmp_path / "nowhere", stereo_csv)
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt,choices,bias_type\nthe man is BLANK .,['a' 'b'],gender\n", encoding="utf-8")
    with pytest.raises(ValueError, match="three choices"):
        stereoset_score(tiny_mlm, bad)


@pytest.mark.skipif(not Path("/work/shared/data/gender-bias/intrasentence_stereo_set.csv").exists(),
                    reason="shared StereoSet file not present")
def test_shared_stereoset_choices_parse():
    with open("/work/shared/data/gender-bias/intrasentence_stereo_set.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert all(len(parse_choices(r["choices"])) == 3 and "BLANK" in r["prompt"] for r in rows)
