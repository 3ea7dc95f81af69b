"""Parts of target-to-source augmentation that need no trained model: discriminator data, the PPO reward
and its pairing rule, and the sample pool."""

from __future__ import annotations

import json
import random
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from cfaug.data.aste import Triplet, align_terms, label_sequence, parse_label_sequence, parse_line, parse_triplets
from cfaug.judges.aste_discriminators import ALIGNED, FLUENT, NOT_ALIGNED, NOT_FLUENT
from cfaug.methods.t2s.discriminator_data import FluencyRank, alignment_data, corrupt, fluency_data, misaligned
from cfaug.methods.t2s.pool import (
    PoolError,
    add_templates,
    entry,
    from_examples,
    n_triplets,
    pseudo_label,
    read_pool,
    read_unlabeled,
    write_pool,
)
from cfaug.methods.t2s.tuning import Pairing, length_penalty, rewards
from cfaug.nlp.templates import check_template, template_size

#: 30 simple review sentences for the trigram model
CORPUS = [
    "the food was great .", "the service was slow .", "the pizza was good but the service was slow .",
    "the staff were very friendly .", "the wine list is excellent .", "the room was clean and quiet .",
    "i loved the pasta .", "i did not like the dessert .", "the food was cold and the staff were rude .",
    "the prices are very reasonable .", "great food and friendly staff .", "the view from the room is amazing .",
    "we had a great time .", "the menu is small but the food is good .", "the waiter was very rude .",
    "the coffee was too bitter .", "the music was too loud .", "i would come back for the pizza .",
    "the portions are huge .", "the fish was fresh and tasty .", "the bathroom was dirty .",
    "the location is perfect .", "the bread was stale .", "we waited an hour for the food .",
    "the steak was cooked perfectly .", "the sushi is the best in town .", "the chairs are not comfortable .",
    "the service was friendly and fast .", "the salad was fresh .", "i loved the wine .",
]

POOL_LINES = [
    "The food was great .####[([1], [3], 'POS')]",
    "The service was slow .####[([1], [3], 'NEG')]",
    "Our waiter was very friendly .####[([1], [3, 4], 'POS')]",
    "The pizza is cheap but the wine is awful .####[([1], [3], 'POS'), ([6], [8], 'NEG')]",
    "Battery life is long and the screen bright .####[([0, 1], [3], 'POS'), ([6], [7], 'POS')]",
    "The room felt cramped yet clean .####[([1], [3], 'NEG'), ([1], [5], 'POS')]",
    "Staff rude , noise terrible , view amazing .####"
    "[([0], [1], 'NEG'), ([3], [4], 'NEG'), ([6], [7], 'POS')]",
]


def make_pool():
    examples = [parse_line(line, id=str(i)) for i, line in enumerate(POOL_LINES, start=1)]
    return from_examples(examples)


# ------------------------------------------------------------------------------------------------ fluency


@pytest.fixture(scope="module")
def rank():
    return FluencyRank(CORPUS)


def test_fluency_rank_prefers_real_sentences(rank):
    real = ["the fish was fresh and tasty .", "the service was friendly and fast .", "the pizza was good but "
            "the service was slow ."]
    scrambled = ["fresh the and tasty . fish was", "friendly the fast . and service was was",
                 "slow but the the good service . pizza was was"]
    for good, bad in zip(real, scrambled):
        assert rank(good) > rank(bad)
        assert rank.ppl(good) < rank.ppl(bad)
    # sentences the model has not seen: perplexity still separates word order from word salad
    for good, bad in [("the wine was good .", "good the . was wine"),
                      ("the staff were friendly and fast .", "friendly the fast and were . staff")]:
        assert rank.ppl(good) * 5 < rank.ppl(bad)
        assert rank(good) >= rank(bad)
    for s in real + scrambled + CORPUS + ["completely unknown words here"]:
        assert 0.0 <= rank(s) <= 1.0
    ranks = [rank(s) for s in CORPUS]
    assert max(ranks) == 1.0
    # the reference is a held-out tenth of the sentences, which the trigram model has not seen
    assert len(rank.ref) == max(1, int(len(CORPUS) * 0.1))
    assert rank(scrambled[0]) < rank(real[0])
    assert FluencyRank(["a b c ."])("a b c .") == 1.0


def test_corrupt_changes_the_tokens():
    tokens = "the battery life of this laptop is really long .".split()
    rng = random.Random(0)
    for _ in range(60):
        out = corrupt(tokens, rng)
        assert out != tokens
        assert out
        assert set(out) <= set(tokens)
    assert tokens == "the battery life of this laptop is really long .".split()   # not changed in place
    assert corrupt(["great", "food"], rng) == ["great", "food", "great", "food"]


def test_corrupt_uses_every_kind():
    tokens = "a b c d e f g h".split()
    rng = random.Random(1)
    lengths = Counter(len(corrupt(tokens, rng)) - len(tokens) for _ in range(200))
    assert any(d < 0 for d in lengths)        # drops
    assert any(d > 0 for d in lengths)        # repeats
    assert lengths[0] > 0                     # swaps and shuffles


def fixed_rank(scores):
    return lambda s: scores.get(s, 0.5)


def test_fluency_data_balanced_with_generated_negatives():
    pool = make_pool()
    n = len(pool)
    mixed = [{"s_ij": "food the was great great", "s_jj": "the food was great ."},
             {"s_ij": "the service was slow .", "s_jj": "the pizza is cheap ."}]
    r = fixed_rank({"food the was great great": 0.2, "the food was great .": 0.9,
                    "the service was slow .": 0.85, "the pizza is cheap .": 0.9})
    texts, labels, counts = fluency_data(pool, mixed, r, theta=0.1, seed=0)
    assert len(texts) == len(labels)
    assert labels.count(FLUENT) == labels.count(NOT_FLUENT) == n
    assert labels == [FLUENT] * n + [NOT_FLUENT] * n
    assert counts == {"fluent": n, "generated_not_fluent": 1, "corrupted": n - 1, "mixed_pairs": 2, "theta": 0.1}
    bad = texts[n:]
    assert "food the was great great" in bad                     # 0.2 < 0.9 - 0.1
    assert "the service was slow ." not in bad                   # 0.85 is within theta of 0.9
    real = {" ".join(e["tokens"]).lower() for e in pool}
    assert set(texts[:n]) == real
    assert not set(bad[1:]) & real                               # corrupted copies are not real sentences


def test_fluency_data_without_generated_sentences():
    pool = make_pool()
    texts, labels, counts = fluency_data(pool, [], fixed_rank({}), theta=0.1, seed=3)
    assert counts["generated_not_fluent"] == 0 and counts["corrupted"] == len(pool)
    assert labels.count(FLUENT) == labels.count(NOT_FLUENT) == len(pool)
    assert texts == fluency_data(pool, [], fixed_rank({}), theta=0.1, seed=3)[0]


# ------------------------------------------------------------------------------------------------ alignment


def test_misaligned_differs_from_the_true_label():
    pool = make_pool()
    rng = random.Random(0)
    made = 0
    for _ in range(20):
        for e in pool:
            other = pool[rng.randrange(len(pool))]
            bad = misaligned(e, other, rng)
            if bad is None:
                continue
            made += 1
            assert bad != e["label_seq"]
            parse_label_sequence(bad)                            # still a well-formed label sequence
    assert made > len(pool) * 10


def test_misaligned_kinds():
    e = make_pool()[3]        # "The pizza is cheap but the wine is awful ." two triplets
    other = make_pool()[0]    # food | great | positive
    seen = set()
    for seed in range(80):
        bad = misaligned(e, other, random.Random(seed))
        if bad is None:
            continue
        terms = parse_label_sequence(bad)
        true = parse_label_sequence(e["label_seq"])
        if len(terms) == 1:
            seen.add("dropped")
            assert terms[0] in true
        elif len(terms) == 3:
            seen.add("added")
            assert terms[:2] == true and terms[2] == ("food", "great", "POS")
        elif [t[:2] for t in terms] == [t[:2] for t in true]:
            seen.add("polarity")
            assert sum(a[2] != b[2] for a, b in zip(terms, true)) == 1
        else:
            seen.add("moved")
            assert align_terms(e["tokens"], terms) is not None    # moved to other words of the sentence
    assert seen == {"dropped", "added", "polarity", "moved"}


def test_alignment_data_balanced_with_generated_negatives():
    pool = make_pool()
    predicted = {pool[0]["id"]: "food | great | negative", pool[1]["id"]: pool[1]["label_seq"]}
    lab = pool[0]["label_seq"]           # food | great | positive
    missing = {"s_ij": "the wine was great .", "label_seq": lab, "extracted": None}
    good = [{"s_ij": f"the food {w} great .", "label_seq": lab, "extracted": lab}
            for w in ("really was", "is", "looked")]
    wrong = {"s_ij": "the food tasted great .", "label_seq": lab, "extracted": "food | great | negative"}
    pairs, labels, counts = alignment_data(pool, [missing, *good, wrong], predicted, seed=0)
    n = counts["aligned"]
    assert counts["not_aligned"] == n
    assert labels == [ALIGNED] * n + [NOT_ALIGNED] * n
    assert len(pairs) == 2 * n
    assert counts["from_extractor"] == 1 and counts["generated_aligned"] == 3 and counts["generated_not_aligned"] == 1
    # positives: 7 pool pairs + 3 generated; negatives: at most one per pool entry + extractor + the missing term
    assert n <= 1 + len(pool) + 1
    negatives = pairs[n:]
    assert (lab.lower(), "the wine was great .") in negatives
    assert ("food | great | negative", "the food was great .") in negatives
    truth = {" ".join(e["tokens"]).lower(): e["label_seq"].lower() for e in pool}
    for seq, sent in pairs[:n]:
        assert truth.get(sent, lab.lower()) == seq
    for seq, sent in negatives:
        if sent in truth:
            assert seq != truth[sent]
    # a sentence whose extraction differs from its label is on neither side
    assert all(sent != "the food tasted great ." for _, sent in pairs)


def test_alignment_data_samples_down_the_larger_side():
    pool = make_pool()
    pairs, labels, counts = alignment_data(pool, [], {}, seed=1)
    assert counts["aligned"] == counts["not_aligned"] == labels.count(NOT_ALIGNED)
    assert labels.count(ALIGNED) <= len(pool)
    assert counts["aligned"] >= len(pool) - 2        # each entry usually yields a perturbed label


# ------------------------------------------------------------------------------------------------ reward


def test_length_penalty():
    template = "root [ nsubj [ det ] punct ]"
    assert template_size(template) == 4
    assert length_penalty("good food", template) == pytest.approx((4 - 2) ** 2 / 4)
    assert length_penalty("the food was great .", template) == 0.0
    assert length_penalty("food was great", template) == pytest.approx(1 / 4)
    assert length_penalty("", template) == pytest.approx(4.0)
    assert length_penalty("good food", "") == 0.0


def test_pairing_same_triplet_count_different_ids():
    pool = make_pool()
    counts = Counter(n_triplets(e) for e in pool)
    assert counts == {1: 3, 2: 3, 3: 1}
    small = [e for e in pool if n_triplets(e) < 3]
    pairing = Pairing(small, small)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        got = pairing.draw(rng)
        assert got is not None
        lab, tpl = got
        assert n_triplets(lab) == n_triplets(tpl)
        assert lab["id"] != tpl["id"]
        seen.add((lab["id"], tpl["id"]))
    assert len(seen) == 12          # every ordered pair within each group of three
    for lab in small:
        assert [small[k]["id"] for k in pairing.compatible(lab)] == [e["id"] for e in small
                                                                    if n_triplets(e) == n_triplets(lab)]
        lab2, tpl = pairing.draw(rng, label=lab)
        assert lab2 is lab and tpl["id"] != lab["id"] and n_triplets(tpl) == n_triplets(lab)
    three = next(e for e in pool if n_triplets(e) == 3)
    assert pairing.compatible(three) == []
    assert pairing.draw(rng, label=three) is None


class FakeFluency:
    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)
        self.calls = []

    def fluency(self, sentences):
        self.calls.append(list(sentences))
        return self.values


class FakeAlignment(FakeFluency):
    def alignment(self, seqs, sentences):
        self.calls.append((list(seqs), list(sentences)))
        return self.values


def test_rewards_are_fluency_plus_alignment_minus_penalty():
    lab = {"id": "a", "label_seq": "Food | Great | positive"}
    tpl4 = {"id": "b", "template": "root [ nsubj [ det ] punct ]"}
    tpl2 = {"id": "c", "template": "root [ nsubj ]"}
    sentences = ["good food", "the food was really great", "great food"]
    pairs = [(lab, tpl4), (lab, tpl4), (lab, tpl2)]
    flu, ali = FakeFluency([0.9, 0.8, 0.1]), FakeAlignment([0.5, 0.25, 1.0])
    scores, parts = rewards(sentences, pairs, flu, ali)
    pen = np.array([1.0, 0.0, 0.0])
    assert scores == pytest.approx(np.array([0.9, 0.8, 0.1]) + np.array([0.5, 0.25, 1.0]) - pen)
    assert parts == pytest.approx({"fluency": 0.6, "alignment": 1.75 / 3, "length_penalty": 1 / 3})
    assert flu.calls == [sentences]
    assert ali.calls == [(["food | great | positive"] * 3, sentences)]


class FixedClassifier:
    """A trained classifier stand-in: fixed probability rows, whatever the inputs."""

    name = "fixed"

    def __init__(self, labels, rows):
        self.labels, self.rows, self.inputs = list(labels), np.asarray(rows, dtype=float), []

    def predict_proba(self, inputs):
        self.inputs.append(list(inputs))
        return self.rows[: len(inputs)]


def _discriminators(p_flu, p_ali):
    from cfaug.judges.aste_discriminators import AlignmentDiscriminator, FluencyDiscriminator

    # the positive label is not the first column, so the column lookup is exercised too
    flu = FluencyDiscriminator(FixedClassifier([NOT_FLUENT, FLUENT], [[1 - p, p] for p in p_flu]))
    ali = AlignmentDiscriminator(FixedClassifier([NOT_ALIGNED, ALIGNED], [[1 - p, p] for p in p_ali]))
    return flu, ali


def test_reward_on_logits_is_the_log_odds_of_both_discriminators_minus_the_penalty():
    lab = {"id": "a", "label_seq": "Food | Great | positive"}
    tpl4 = {"id": "b", "template": "root [ nsubj [ det ] punct ]"}
    sentences = ["good food", "the food was really great", "great food ."]
    pairs = [(lab, tpl4)] * 3
    p_flu, p_ali = [0.9, 0.5, 0.2], [0.25, 0.8, 0.99]
    flu, ali = _discriminators(p_flu, p_ali)
    pen = np.array([1.0, 0.0, 0.25])  # (4 - 2)^2 / 4, 0, (4 - 3)^2 / 4
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    scores, parts = rewards(sentences, pairs, flu, ali, "logit")
    assert scores == pytest.approx(logit(np.array(p_flu)) + logit(np.array(p_ali)) - pen)
    assert scores[0] == pytest.approx(np.log(9) + np.log(1 / 3) - 1.0)
    # the log has the probabilities and the penalty beside the reward, and the terms the reward added
    assert parts == pytest.approx({"fluency": np.mean(p_flu), "alignment": np.mean(p_ali), "length_penalty": 1.25 / 3,
                                   "fluency_logit": logit(np.array(p_flu)).mean(),
                                   "alignment_logit": logit(np.array(p_ali)).mean()})
    # the same discriminators on the probability scale: the sum of the probabilities
    prob_scores, prob_parts = rewards(sentences, pairs, *_discriminators(p_flu, p_ali), "prob")
    assert prob_scores == pytest.approx(np.array(p_flu) + np.array(p_ali) - pen)
    assert set(prob_parts) == {"fluency", "alignment", "length_penalty"}
    with pytest.raises(ValueError, match="scale"):
        rewards(sentences, pairs, *_discriminators(p_flu, p_ali), "logits")


def test_the_paper_preset_rewards_logits_the_default_probabilities():
    from cfaug.methods import build_method

    assert build_method("t2s", {"unlabeled": "u.txt"}, preset="paper").config.reward_scale == "logit"
    assert build_method("t2s", {}).config.reward_scale == "prob"


def test_log_odds_are_clipped_where_a_discriminator_is_certain():
    from cfaug.judges.aste_discriminators import LOGIT_EPS, log_odds

    values = log_odds([0.0, 0.5, 1.0])
    bound = np.log((1 - LOGIT_EPS) / LOGIT_EPS)
    assert values == pytest.approx([-bound, 0.0, bound])
    assert np.isfinite(values).all()


# ------------------------------------------------------------------------------------------------ pool


def test_entry_and_from_examples():
    e = entry("x1", ["good", "food"], [Triplet((1,), (0,), "POS")], "pseudo", 0.876543)
    assert e == {"id": "x1", "tokens": ["good", "food"], "triplets": "[([1], [0], 'POS')]",
                 "label_seq": "food | good | positive", "template": None, "source": "pseudo", "confidence": 0.8765}
    assert entry("x2", ("a",), (), "train")["confidence"] is None
    examples = [parse_line(POOL_LINES[0], id="5"), parse_line("Nothing here .####[]", id="6"),
                parse_line(POOL_LINES[3], id="7")]
    pool = from_examples(examples)
    assert [p["id"] for p in pool] == ["t5", "t7"]            # the example without triplets is left out
    assert pool[1]["label_seq"] == "pizza | cheap | positive ; wine | awful | negative"
    assert [p["source"] for p in pool] == ["train", "train"]
    assert [p["id"] for p in from_examples(examples, source="pseudo")] == ["p5", "p7"]
    assert [n_triplets(p) for p in pool] == [1, 2]


def test_add_templates():
    pool = make_pool()[:3]
    add_templates(pool)
    for e in pool:
        assert check_template(e["template"]) is None
        assert template_size(e["template"]) == len(e["tokens"])
    pruned = make_pool()[:3]
    add_templates(pruned, prune_terms=True)
    for e, full in zip(pruned, pool):
        terms = set()
        for t in parse_triplets(e["triplets"]):
            terms |= set(t.aspect) | set(t.opinion)
        size = template_size(e["template"])
        assert check_template(e["template"]) is None
        # every term token goes, except a root that is a term
        assert len(e["tokens"]) - len(terms) <= size <= len(e["tokens"]) - len(terms) + 1
        assert size < template_size(full["template"])
    shallow = make_pool()[:1]
    ticks = []
    add_templates(shallow, max_depth=1, progress=ticks.append)
    assert shallow[0]["template"] == "root" and ticks == [1]


def test_write_read_pool(tmp_path):
    pool = make_pool()
    pool[0]["template"] = "root [ nsubj ]"
    pool.append(entry("u9", ["café", "très", "bon"], [Triplet((0,), (2,), "POS")], "pseudo", 0.9))
    path = tmp_path / "pool.jsonl"
    write_pool(pool, path)
    assert read_pool(path) == pool
    assert not (tmp_path / "pool.jsonl.tmp").exists()
    assert len(path.read_text(encoding="utf-8").splitlines()) == len(pool)
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[-1])["tokens"][0] == "café"


def test_read_unlabeled_txt(tmp_path):
    path = tmp_path / "reviews.txt"
    lines = ["I couldn't pay $80 for this.", "", "Great food!", "Great food!",
             "one two three four five six seven eight nine ten eleven twelve", "The staff was rude."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, counts = read_unlabeled(path, limit=10, seed=0, max_words=9)
    assert counts == {"lines": 5, "unreadable_rows": 0, "distinct": 4, "skipped_too_long": 1, "sampled": 3}
    assert sorted(out) == sorted([["I", "could", "n't", "pay", "$", "80", "for", "this", "."],
                                  ["Great", "food", "!"], ["The", "staff", "was", "rude", "."]])
    short, counts = read_unlabeled(path, limit=10, seed=0, max_words=8)
    assert counts["skipped_too_long"] == 2 and counts["sampled"] == 2
    assert all(len(t) <= 8 for t in short)
    # a limit takes a seeded sample
    a, ca = read_unlabeled(path, limit=1, seed=1, max_words=20)
    b, _ = read_unlabeled(path, limit=1, seed=1, max_words=20)
    assert a == b and len(a) == 1 and ca["sampled"] == 1
    firsts = {tuple(read_unlabeled(path, limit=1, seed=s, max_words=20)[0][0]) for s in range(12)}
    assert len(firsts) > 1


def test_read_unlabeled_tsv(tmp_path):
    path = tmp_path / "reviews.tsv"
    path.write_text("id\ttext\n1\tThe food was great.\n2\t\n3\tService slow.\n", encoding="utf-8")
    out, counts = read_unlabeled(path, limit=10, seed=0, max_words=50)
    assert sorted(out) == [["Service", "slow", "."], ["The", "food", "was", "great", "."]]
    assert counts["unreadable_rows"] == 1 and counts["lines"] == 2 and counts["sampled"] == 2


def test_read_unlabeled_errors(tmp_path):
    with pytest.raises(PoolError, match="no such file"):
        read_unlabeled(tmp_path / "missing.txt", limit=5, seed=0, max_words=10)
    bad = tmp_path / "bad.tsv"
    bad.write_text("id\tscore\n1\t3\n", encoding="utf-8")
    with pytest.raises(PoolError, match="no text column"):
        read_unlabeled(bad, limit=5, seed=0, max_words=10)
    long = tmp_path / "long.txt"
    long.write_text("a b c d e f\n", encoding="utf-8")
    with pytest.raises(PoolError, match="no usable sentence"):
        read_unlabeled(long, limit=5, seed=0, max_words=3)


class FakeExtractor:
    def __init__(self, answers):
        self.answers = answers
        self.batches = []

    def predict(self, token_lists):
        self.batches.append(len(token_lists))
        return [self.answers[" ".join(t)] for t in token_lists]


def pred(a, o, pol, conf):
    return SimpleNamespace(triplet=Triplet(a, o, pol), confidence=conf)


def test_pseudo_label():
    sentences = [["good", "food"], ["nothing", "here"], ["slow", "service", "but", "nice", "view"],
                 ["rude", "staff", "."], ["great", "wine"]]
    answers = {
        "good food": [pred((1,), (0,), "POS", 0.95)],
        "nothing here": [],
        "slow service but nice view": [pred((1,), (0,), "NEG", 0.9), pred((4,), (3,), "POS", 0.8),
                                       pred((1,), (0,), "NEG", 0.85)],
        "rude staff .": [pred((1,), (0,), "NEG", 0.99), pred((1,), (2,), "NEG", 0.5)],
        "great wine": [pred((1,), (0,), "POS", 0.75)],
    }
    ext = FakeExtractor(answers)
    ticks = []
    kept, counts = pseudo_label(ext, sentences, min_confidence=0.75, progress=ticks.append, batch_size=2)
    assert ext.batches == [2, 2, 1]
    assert len(ticks) == 5
    assert counts == {"sentences": 5, "kept": 3, "no_triplet": 1, "low_confidence": 1, "min_confidence": 0.75}
    assert [e["id"] for e in kept] == ["u0", "u2", "u4"]
    assert all(e["source"] == "pseudo" for e in kept)
    mixed = kept[1]
    assert mixed["confidence"] == 0.8                      # the least confident triplet
    assert mixed["triplets"] == "[([1], [0], 'NEG'), ([4], [3], 'POS')]"      # sorted, duplicates merged
    assert mixed["label_seq"] == "service | slow | negative ; view | nice | positive"
    assert n_triplets(mixed) == 2
    assert label_sequence(mixed["tokens"], parse_triplets(mixed["triplets"])) == mixed["label_seq"]
    assert kept[2]["confidence"] == 0.75                   # the threshold is inclusive


def test_pairing_never_pairs_an_entry_with_itself():
    one = {"id": "a", "triplets": "[([0], [1], 'POS')]", "label_seq": "x | y | positive", "template": "root"}
    two = {"id": "b", "triplets": "[([0], [1], 'POS'), ([2], [3], 'NEG')]", "label_seq": "x | y | positive ; "
           "z | w | negative", "template": "root"}
    pairing = Pairing([one, two], [one, two])
    rng = np.random.default_rng(0)
    # each entry is the only template with its number of triplets: no pair exists
    assert pairing.draw(rng, one) is None and pairing.draw(rng, two) is None
    three = dict(one, id="c")
    pairing = Pairing([one, three], [one, three])
    for _ in range(20):
        lab, tpl = pairing.draw(rng)
        assert lab["id"] != tpl["id"]


def test_discriminators_are_registered_judges(tmp_path):
    from cfaug.classifiers.base import build_classifier
    from cfaug.data.tasks import make_task
    from cfaug.judges.base import Candidate
    from cfaug.judges.registry import JudgeContext, build_judge

    texts = ["the food was good ."] * 6 + ["good the . was food"] * 6
    labels = [FLUENT] * 6 + [NOT_FLUENT] * 6
    clf = build_classifier("tfidf-logreg", {}, seed=0)
    clf.fit(texts, labels)
    clf.save(tmp_path / "fluency")
    judge = build_judge({"@judges": "t2s-fluency", "path": str(tmp_path / "fluency")}, JudgeContext(make_task("aste")))
    scores = judge.score([Candidate({"text": "x"}, {"text": t}, "[]") for t in ("the food was good .", "good the . was food")])
    assert scores[0] > scores[1]
    pairs = [("food | good | positive", "the food was good .")] * 6 + [("food | bad | negative", "the food was good .")] * 6
    clf = build_classifier("tfidf-logreg", {}, seed=0)
    clf.fit(pairs, [ALIGNED] * 6 + [NOT_ALIGNED] * 6)
    clf.save(tmp_path / "alignment")
    judge = build_judge({"@judges": "t2s-alignment", "path": str(tmp_path / "alignment")}, JudgeContext(make_task("aste")))
    good = Candidate({"text": "x"}, {"text": "the food was good ."}, "[([1], [3], 'POS')]")
    bad = Candidate({"text": "x"}, {"text": "the food was good ."}, "[([1], [3], 'NEG')]")
    s = judge.score([good, bad])
    assert s[0] > s[1] and judge.describe()["judge"] == "t2s-alignment"
