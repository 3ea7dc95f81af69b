"""Training data of the two discriminators (the paper's section 4.2), built from the pool and from the
supervised generator's own sentences.

Fluency: real pool sentences are fluent. Non-fluent are (a) corrupted real sentences (words swapped, dropped,
repeated or a window shuffled) and (b) sentences the generator writes for the label of one entry and the
template of another, ``s_ij``, whose fluency falls more than ``theta`` below that of the sentence written
for the template's own label, ``s_jj`` (equation 8). The paper measures that fluency with an external
classifier; here it is the rank of a sentence's perplexity, under a trigram model of the pool, among the
pool's own sentences (0 = less fluent than every real sentence, 1 = more fluent than all), so ``theta`` = 0.1
means ten percentile points.

Alignment: a pool sentence with its label is aligned. Non-aligned labels are made from the right one: a
polarity changed, a triplet dropped (the sentence then says more than the label), a triplet of another
sentence added, a term replaced by other words of the sentence, and the extractor's own prediction where it
differs from the label. Generated sentences join both sides: ``s_ij`` is aligned with ``l_i`` when the
extractor reads exactly ``l_i`` from it, and not aligned when a term of ``l_i`` is missing from it. The paper
takes its non-aligned labels from the extractor's beam; a grid tagger has no beam, so they are built as
above (see docs/fidelity.md).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from typing import Any

from cfaug.data.aste import (POLARITY_WORDS, Triplet, align_terms, find_term, label_sequence, parse_label_sequence,
                             parse_triplets)
from cfaug.judges.aste_discriminators import ALIGNED, FLUENT, NOT_ALIGNED, NOT_FLUENT


class FluencyRank:
    """Fluency in [0, 1]: the share of reference sentences whose trigram perplexity is at least this
    sentence's (see the module docstring). The trigram model is fit on all but a seeded ``held_out`` share of
    the sentences, which are the reference."""

    def __init__(self, sentences: Sequence[str], held_out: float = 0.1, seed: int = 0) -> None:
        from cfaug.judges.ngram_lm import NgramLM

        order = list(range(len(sentences)))
        random.Random(seed).shuffle(order)
        n_ref = max(1, int(len(order) * held_out)) if len(order) > 1 else 0
        self.lm = NgramLM(3).fit([sentences[i] for i in order[n_ref:]] or list(sentences))
        # the reference perplexities are of sentences the model has not seen, as the sentences ranked are not
        self.ref = sorted(self.ppl(sentences[i]) for i in (order[:n_ref] or order))

    def ppl(self, sentence: str) -> float:
        return self.lm.perplexity(sentence)

    def __call__(self, sentence: str) -> float:
        if not self.ref:
            return 0.0
        return 1.0 - bisect.bisect_left(self.ref, self.ppl(sentence)) / len(self.ref)


def corrupt(tokens: Sequence[str], rng: random.Random) -> list[str]:
    """A broken copy of a sentence: one of swap, drop, repeat, shuffle a window."""
    toks = list(tokens)
    n = len(toks)
    if n < 3:
        return toks + toks
    kind = rng.randrange(4)
    if kind == 0:
        for _ in range(max(1, n // 4)):
            i, j = rng.sample(range(n), 2)
            toks[i], toks[j] = toks[j], toks[i]
    elif kind == 1:
        keep = [t for t in toks if rng.random() > 0.35]
        toks = keep if 0 < len(keep) < n else toks[: n // 2]
    elif kind == 2:
        i = rng.randrange(n)
        span = toks[i: i + rng.randint(1, 3)]
        toks = toks[: i] + span * rng.randint(2, 3) + toks[i + len(span):]
    else:
        i = rng.randrange(max(1, n - 3))
        window = toks[i: i + rng.randint(3, 6)]
        rng.shuffle(window)
        toks = toks[: i] + window + toks[i + len(window):]
    return toks if toks != list(tokens) else list(reversed(toks))


def fluency_data(pool: Sequence[dict[str, Any]], mixed: Sequence[dict[str, Any]], rank: FluencyRank, theta: float,
                 seed: int) -> tuple[list[str], list[str], dict[str, Any]]:
    """(texts, labels, counts): fluent pool sentences against non-fluent generated and corrupted ones, in
    equal numbers (the larger side is cut: generated negatives are kept before corrupted ones)."""
    rng = random.Random(seed)
    fluent = [" ".join(e["tokens"]).lower() for e in pool]
    generated = [m["s_ij"] for m in mixed if rank(m["s_ij"]) < rank(m["s_jj"]) - theta]
    n_corrupt = max(len(fluent) - len(generated), len(fluent) // 2)
    corrupted = [" ".join(corrupt(pool[rng.randrange(len(pool))]["tokens"], rng)).lower() for _ in range(n_corrupt)]
    bad = generated + corrupted
    n = min(len(fluent), len(bad))
    fluent, bad = rng.sample(fluent, n), bad[:n]  # generated negatives first, then corrupted ones
    corrupted = corrupted[: max(0, n - len(generated))]
    generated = generated[:n]
    texts = fluent + bad
    labels = [FLUENT] * len(fluent) + [NOT_FLUENT] * len(bad)
    return texts, labels, {"fluent": len(fluent), "generated_not_fluent": len(generated),
                           "corrupted": len(corrupted), "mixed_pairs": len(mixed), "theta": theta}


def _replace_term(tokens: Sequence[str], t: Triplet, rng: random.Random) -> Triplet | None:
    """``t`` with its aspect or opinion moved to another span of the sentence of the same length."""
    which = rng.randrange(2)
    span = t.aspect if which == 0 else t.opinion
    taken = set(t.aspect) | set(t.opinion)
    words = [tokens[i].lower() for i in span]
    starts = [i for i in range(len(tokens) - len(span) + 1)
              if not taken & set(range(i, i + len(span))) and tokens[i].isalpha()
              and [w.lower() for w in tokens[i: i + len(span)]] != words]
    if not starts:
        return None
    s = rng.choice(starts)
    new = tuple(range(s, s + len(span)))
    return Triplet(new, t.opinion, t.polarity) if which == 0 else Triplet(t.aspect, new, t.polarity)


def misaligned(e: dict[str, Any], other: dict[str, Any], rng: random.Random) -> str | None:
    """A label sequence that does not fit ``e``'s sentence (one of the perturbations of the module
    docstring), or None when the drawn perturbation does not apply."""
    bad = _misaligned(e, other, rng)
    return None if bad is None or bad.lower() == e["label_seq"].lower() else bad


def _misaligned(e: dict[str, Any], other: dict[str, Any], rng: random.Random) -> str | None:
    tokens = e["tokens"]
    trips = list(parse_triplets(e["triplets"]))
    kind = rng.randrange(4)
    if kind == 0:
        k = rng.randrange(len(trips))
        pol = rng.choice([p for p in POLARITY_WORDS if p != trips[k].polarity])
        trips[k] = Triplet(trips[k].aspect, trips[k].opinion, pol)
        return label_sequence(tokens, trips)
    if kind == 1 and len(trips) > 1:
        trips.pop(rng.randrange(len(trips)))
        return label_sequence(tokens, trips)
    if kind == 2:
        extra = parse_label_sequence(other["label_seq"])
        a, o, p = extra[rng.randrange(len(extra))]
        if find_term(tokens, a) is not None and find_term(tokens, o) is not None:
            return None
        return label_sequence(tokens, trips) + f" ; {a} | {o} | {POLARITY_WORDS[p]}"
    k = rng.randrange(len(trips))
    moved = _replace_term(tokens, trips[k], rng)
    if moved is None:
        return None
    trips[k] = moved
    return label_sequence(tokens, trips)


def alignment_data(pool: Sequence[dict[str, Any]], mixed: Sequence[dict[str, Any]], predicted: dict[str, str],
                   seed: int) -> tuple[list[tuple[str, str]], list[str], dict[str, Any]]:
    """((label sequence, sentence) pairs, labels, counts); ``predicted`` maps pool ids to the extractor's
    label sequence of the sentence (used where it differs from the entry's label)."""
    rng = random.Random(seed)
    pos: list[tuple[str, str]] = []
    neg: list[tuple[str, str]] = []
    from_model = gen_pos = gen_neg = 0
    for e in pool:
        sent = " ".join(e["tokens"]).lower()
        pos.append((e["label_seq"].lower(), sent))
        pred = predicted.get(e["id"])
        if pred is not None and pred.lower() != e["label_seq"].lower():
            neg.append((pred.lower(), sent))
            from_model += 1
        for _ in range(3):
            bad = misaligned(e, pool[rng.randrange(len(pool))], rng)
            if bad is not None:
                neg.append((bad.lower(), sent))
                break
    for m in mixed:
        tokens = m["s_ij"].split()
        terms = parse_label_sequence(m["label_seq"])
        if align_terms(tokens, terms) is None:
            neg.append((m["label_seq"].lower(), m["s_ij"]))
            gen_neg += 1
        elif m.get("extracted") is not None and m["extracted"].lower() == m["label_seq"].lower():
            pos.append((m["label_seq"].lower(), m["s_ij"]))
            gen_pos += 1
    n = min(len(pos), len(neg))
    pos, neg = rng.sample(pos, n), rng.sample(neg, n)
    return pos + neg, [ALIGNED] * n + [NOT_ALIGNED] * n, {
        "aligned": n, "not_aligned": n, "from_extractor": from_model, "generated_aligned": gen_pos,
        "generated_not_aligned": gen_neg}
