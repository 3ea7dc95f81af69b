"""Replacement candidates for a causal word: opposite-polarity words that fit the context.

Two proposers share one interface, ``propose(requests) -> list of (candidate, context score) lists``:

* :class:`LexiconProposer` (offline default): opposite-polarity lexicon words ranked by a prior
  (word-embedding similarity to the replaced word under the sentence encoder, the built-in antonym table,
  substitution pairs mined from paired counterfactual data) plus a bigram model of the input corpus.
* :class:`MaskedLMProposer`: a masked language model by local path proposes the top words for the masked
  slot; those of the opposite polarity are kept, scored by the MLM's log-probability.

The method then adds the classifier's movement toward the target (Eq. 1 on the candidate) and picks the
best candidate.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cfaug.nlp.followers import fits
from cfaug.nlp.inflect import attested, lemmas, plausible_tag, reinflect, upos_of_tag
from cfaug.editing.lexicon import NEGATED_ONLY, Lexicon
from cfaug.editing.ngram import BigramModel
from cfaug.proposers import PROPOSERS


#: the ``target_polarity`` of a request for words of neither polarity (synonym substitution)
NEUTRAL = "neutral"


@dataclass(frozen=True)
class ReplacementRequest:
    word: str  # lower-cased word to replace
    left: str  # lower-cased previous token ("<s>" at sentence start)
    right: str  # lower-cased next token ("</s>" at sentence end)
    target_polarity: str  # the polarity replacements must have, or NEUTRAL (neither; MaskedLMProposer only)
    masked_sentence: str = ""  # the sentence with the word replaced by the mask token "[MASK]"
    tag: str = ""  # the word's Penn Treebank tag ("" when untagged): replacements take its class and form


def fit_word_class(cands: Sequence[tuple[str, float]], req: ReplacementRequest) -> list[tuple[str, float]]:
    """Candidates put in the word class and form of the replaced word (its tag), dropping those that cannot
    be that class ("heaven" for a past participle) and duplicates ("hates", "hated" -> "hated"). A tag that
    gives the word a class it cannot have is mended first (:func:`cfaug.nlp.inflect.plausible_tag`: "a
    stunning/NN performance" is an adjective). The form must also be one review text uses in that class
    (:func:`cfaug.nlp.inflect.attested`): the dictionary lets "quiet" be a noun and "safe" a verb, but "a
    quiet" and "safed" are not English. Before a particle, an adjective's "of", a verb's object or a clause
    end, a verb or adjective candidate must be one review text puts there (:func:`cfaug.nlp.followers.fits`):
    "ripped off" does not become "loved off", nor "everyone sucked." "everyone enjoyed.". Untagged requests
    and closed-class tags keep the candidates as they are."""
    tag = plausible_tag(req.word, req.tag)
    upos = upos_of_tag(tag)
    if not upos:
        return list(cands)
    out, seen = [], {req.word}
    for cand, score in cands:
        form = reinflect(cand, upos, tag)
        if form is None or form in seen or not attested(cand, form, upos, tag) \
                or not fits(req.word, form, upos, req.right):
            continue
        seen.add(form)
        out.append((form, score))
    return out


#: a word the bigram model saw fewer times is not proposed by context alone (see LexiconProposer.by_context)
CONTEXT_MIN_COUNT = 20
#: prefixes that negate a word ("unfriendly", "inconsiderate", "dishonest", "nonfunctional")
NEGATIVE_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non")


#: words a negative prefix does not oppose to their stem ("each serving could easily feed two" never becomes
#: "uneasily": uneasy is anxious, not hard)
NOT_PREFIX_OPPOSITES = frozenset({"uneasy", "uneasily", "uneasiness"})


def prefix_forms(word: str) -> set[str]:
    """The words :func:`prefix_antonyms` pairs with ``word``: it with a negative prefix, and without one
    (none for the words of :data:`NOT_PREFIX_OPPOSITES`)."""
    low = word.lower()
    if low in NOT_PREFIX_OPPOSITES:
        return set()
    out = {p + low for p in NEGATIVE_PREFIXES} if len(low) >= 4 else set()
    out |= {low[len(p):] for p in NEGATIVE_PREFIXES if low.startswith(p) and len(low) - len(p) >= 4}
    return out - NOT_PREFIX_OPPOSITES


def prefix_antonyms(a: str, b: str) -> bool:
    """Whether one of ``a``, ``b`` is the other with a negative prefix ("considerate", "inconsiderate"),
    the stem at least four letters long."""
    return b.lower() in prefix_forms(a)


@dataclass
class Weights:
    embedding: float = 1.0
    antonym: float = 1.5
    pairs: float = 1.0
    lm: float = 0.15


class WordVectors:
    """Precomputed word embeddings (fitted artifacts) with the ``encode`` call of a sentence encoder:
    generation then needs no encoder model. Unknown words get a zero vector."""

    def __init__(self, words: Sequence[str], vectors: np.ndarray) -> None:
        self.index = {w: i for i, w in enumerate(words)}
        self.vectors = vectors
        self._zero = np.zeros(vectors.shape[1], dtype=vectors.dtype)

    def known(self, word: str) -> bool:
        """Whether ``word`` has a precomputed vector."""
        return word in self.index

    def encode(self, words: Sequence[str]) -> np.ndarray:
        if not words:
            return np.zeros((0, self.vectors.shape[1]), dtype=self.vectors.dtype)
        return np.stack([self.vectors[self.index[w]] if w in self.index else self._zero for w in words])

    WORDS_FILE, VECTORS_FILE = "lexicon_words.txt", "lexicon_vectors.npy"

    @classmethod
    def fit(cls, words: Sequence[str], encoder: object, folder: Path) -> None:
        """Encode ``words`` with a sentence encoder (``encode_persistent``) and write them into ``folder``."""
        np.save(folder / cls.VECTORS_FILE, encoder.encode_persistent(list(words)).astype(np.float32))  # type: ignore[attr-defined]
        (folder / cls.WORDS_FILE).write_text("\n".join(words) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> WordVectors:
        """The vectors :meth:`fit` wrote into ``folder``."""
        words = (folder / cls.WORDS_FILE).read_text(encoding="utf-8").split()
        return cls(words, np.load(folder / cls.VECTORS_FILE))


@PROPOSERS.register("lexicon.v1", "opposite-polarity opinion-lexicon words ranked by word-embedding similarity, "
                    "an antonym table, mined pairs and a bigram model (auto-CAD, offline)")
class LexiconProposer:
    """Offline proposer: lexicon words of the target polarity, ranked by prior and bigram fit. A candidate's
    prior must reach ``min_prior`` (unless the antonym table or mined pairs vouch for it), and for a noun
    (by the request's tag) also ``noun_min_prior``: nouns are often facts of the story, and a distant noun
    changes what the text says ("the monster hunts" -> "the gem hunts")."""

    def __init__(self, lexicon: Lexicon, bigram: BigramModel, encoder: object | None,
                 pairs: dict[str, Counter[str]] | None = None, weights: Weights | None = None,
                 top_n: int = 20, min_count: int = 2, min_prior: float = 0.3, noun_min_prior: float = 0.0) -> None:
        self.lexicon, self.bigram, self.encoder = lexicon, bigram, encoder
        self.pairs = pairs or {}
        self.w = weights or Weights()
        self.top_n, self.min_prior, self.noun_min_prior = top_n, min_prior, noun_min_prior
        self._vocab: dict[str, list[str]] = {}
        self._emb: dict[str, np.ndarray] = {}
        for pol in ("positive", "negative"):
            # words the lexicon lists but treats as polarity-free ("like", "well") are never proposed, nor
            # those that only a negation can flip ("worth")
            words = {w for w in self.lexicon.words(pol) if self.lexicon.polarity(w) == pol and w not in NEGATED_ONLY}
            common = {w for w in words if bigram.count(w) >= min_count and w.isalpha()}
            extra = {a for ants in lexicon.antonyms.values() for a in ants if a in words}
            extra |= {c for cs in self.pairs.values() for c in cs if c in words}
            # words seen in the corpus, plus the antonym table and mined pairs (which also cover
            # inputs too small to have a vocabulary of their own)
            self._vocab[pol] = sorted(common | extra)
        self._vocab_set = {pol: frozenset(words) for pol, words in self._vocab.items()}
        #: what :meth:`by_context` proposes from: the antonym table's common words of each polarity
        self._context_vocab = {pol: [w for w in words if w in lexicon.antonyms
                                     and bigram.count(w) >= CONTEXT_MIN_COUNT]
                               for pol, words in self._vocab.items()}
        self.name = "lexicon"

    def _embed(self, words: Sequence[str]) -> np.ndarray:
        if self.encoder is None:
            return np.zeros((len(words), 1), dtype=np.float32)
        return self.encoder.encode(list(words))  # type: ignore[attr-defined]

    def _vocab_matrix(self, polarity: str) -> np.ndarray:
        if polarity not in self._emb:
            self._emb[polarity] = self._embed(self._vocab[polarity])
        return self._emb[polarity]

    def _query(self, word: str) -> str:
        """The word whose vector stands for ``word``: itself, or, when only its lemma has a precomputed
        vector ("rudest" -> "rude", "overcooked" -> "overcook"), that lemma."""
        known = getattr(self.encoder, "known", None)
        if known is None or known(word):
            return word
        for forms in lemmas(word).values():
            for lemma in forms:
                if lemma != word and known(lemma):
                    return lemma
        return word

    def priors(self, word: str, polarity: str) -> list[tuple[str, float]]:
        """Top candidates for ``word`` by prior score (embedding, antonyms, mined pairs, and the word with
        a negative prefix added or taken off: "inconsiderate" <-> "considerate")."""
        vocab = self._vocab[polarity]
        if not vocab:
            return []
        query = self._query(word)
        sims = self._vocab_matrix(polarity) @ self._embed([query])[0]
        score = self.w.embedding * sims
        ants = set(self.lexicon.antonyms.get(word, ())) | set(self.lexicon.antonyms.get(query, ()))
        ants |= {w for w in (*prefix_forms(word), *prefix_forms(query)) if w in self._vocab_set[polarity]}
        mined = self.pairs.get(word, Counter())
        top_mined = max(mined.values(), default=0)
        bonus = {}
        for i, cand in enumerate(vocab):
            b = 0.0
            if cand in ants:
                b += self.w.antonym
            if top_mined and mined.get(cand):
                b += self.w.pairs * math.log1p(mined[cand]) / math.log1p(top_mined)
            if b:
                bonus[i] = b
        for i, b in bonus.items():
            score[i] += b
        adverb = word.endswith("ly")
        order = [i for i in np.argsort(-score)
                 if vocab[i] != word and (i in bonus or (score[i] >= self.min_prior
                                                          and vocab[i].endswith("ly") == adverb))]
        out = [(vocab[i], float(score[i])) for i in order[: self.top_n]]
        # an adverb's prefix antonym the lexicon lists is proposed even when the texts never used it
        # ("unfortunately" -> "fortunately" in a few reviews that only say "unfortunately"; an adjective's,
        # "illogical" for "logical", reads weaker than the words the texts offer, and is not)
        unseen = sorted(w for w in (*prefix_forms(word), *prefix_forms(query)) if adverb
                        and w not in self._vocab_set[polarity] and self.lexicon.polarity(w) == polarity
                        and w not in NEGATED_ONLY)
        if unseen:
            out = sorted(out + [(w, self.w.antonym) for w in unseen], key=lambda ws: -ws[1])[: self.top_n]
        return out

    def by_context(self, req: ReplacementRequest) -> list[tuple[str, float]]:
        """Candidates for a word no vector describes (one C found outside the lexicon, "salty"): the target
        polarity's words of the antonym table (common, of no one domain: "good", "fresh", not "delicious"
        for a film) most often seen between its neighbours by the bigram model, each with the prior
        ``min_prior`` (the method's classifier movement then chooses)."""
        vocab = self._context_vocab.get(req.target_polarity, ())
        fit = sorted(vocab, key=lambda w: -self.bigram.context_logp(w, req.left, req.right))
        return [(w, self.min_prior) for w in fit[: self.top_n * 3] if w != req.word]

    def propose(self, requests: Sequence[ReplacementRequest]) -> list[list[tuple[str, float]]]:
        self._embed(sorted({r.word for r in requests}))  # one batched encoder call, memoised
        known = getattr(self.encoder, "known", None)
        out = []
        for req in requests:
            priors = self.priors(req.word, req.target_polarity)
            if known is not None and not priors and not known(self._query(req.word)):
                priors = self.by_context(req)
            cands = fit_word_class(priors, req)[: self.top_n]
            if self.noun_min_prior and upos_of_tag(plausible_tag(req.word, req.tag)) == "NOUN":
                cands = [(c, p) for c, p in cands if p >= self.noun_min_prior]
            if not cands:
                out.append([])
                continue
            lm = np.array([self.bigram.context_logp(c, req.left, req.right) for c, _ in cands])
            lm -= lm.max()
            out.append([(c, p + self.w.lm * float(s)) for (c, p), s in zip(cands, lm)])
        return out


@PROPOSERS.register("masked-lm.v1", "a masked language model's fillers of the masked word, kept when they have the "
                    "target polarity (the auto-CAD paper's choice; local path)")
class MaskedLMProposer:
    """Candidates from a masked language model (local path), filtered to the target polarity."""

    def __init__(self, path: str | os.PathLike[str], lexicon: Lexicon, top_k: int = 100,
                 device: str | None = None, batch_size: int = 32, lm_weight: float = 0.15) -> None:
        import torch
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        from cfaug.device import resolve_device
        from cfaug.local_models import quiet_transformers, resolve_local_model

        self.path = resolve_local_model(path, "masked language model")
        quiet_transformers()
        self.tok = AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        self.model = AutoModelForMaskedLM.from_pretrained(str(self.path), local_files_only=True)
        self.device = resolve_device(device)
        self.model.to(self.device).eval()
        self.lexicon, self.top_k, self.batch_size, self.lm_weight = lexicon, top_k, batch_size, lm_weight
        self._torch = torch
        self.name = f"mlm:{self.path.name}"

    def propose(self, requests: Sequence[ReplacementRequest]) -> list[list[tuple[str, float]]]:
        mask = self.tok.mask_token
        out: list[list[tuple[str, float]]] = []
        for i in range(0, len(requests), self.batch_size):
            chunk = requests[i: i + self.batch_size]
            texts = [r.masked_sentence.replace("[MASK]", mask) for r in chunk]
            enc = self.tok(texts, return_tensors="pt", padding=True, truncation=True, max_length=256)
            enc = {k: v.to(self.device) for k, v in enc.items()}
            with self._torch.inference_mode():
                logits = self.model(**enc).logits
            for row, req in enumerate(chunk):
                pos = (enc["input_ids"][row] == self.tok.mask_token_id).nonzero()
                if len(pos) == 0:
                    out.append([])
                    continue
                logp = self._torch.log_softmax(logits[row, pos[0, 0]].float(), dim=-1)
                top = self._torch.topk(logp, min(self.top_k, logp.shape[-1]))
                cands = []
                for score, idx in zip(top.values.tolist(), top.indices.tolist()):
                    word = self.tok.convert_ids_to_tokens(idx).lstrip("Ġ▁").lower()
                    if word.isalpha() and word != req.word and word not in NEGATED_ONLY and \
                            (self.lexicon.polarity(word) or NEUTRAL) == req.target_polarity:
                        cands.append((word, score))
                cands = fit_word_class(cands, req)
                best = max((sc for _, sc in cands), default=0.0)
                out.append([(w, self.lm_weight * (sc - best)) for w, sc in cands])
        return out
