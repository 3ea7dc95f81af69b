"""EDA: the random-edit augmentation baseline of Wei & Zou (2019), with nothing to download.

The four operations of the reference implementation (``jasonwei20/eda_nlp``), each making
``n = max(1, round(alpha * number of words))`` changes (rounding half up):

* synonym replacement (SR): up to ``n`` distinct non-stop words, in random order, are replaced (every
  occurrence, case-insensitively) by a random synonym. The reference takes synonyms from WordNet, which
  is not available offline, so SR runs only when a ``synonyms`` mapping (lower-cased word -> synonyms) is
  given; otherwise it is never chosen.
* random insertion (RI), ``n`` times: with ``synonyms``, a synonym of a random word that has one (up to 10
  tries, as in the reference), else a copy of a random non-stop word of the same text, is inserted at a
  random position. A text with no candidate gets no insertion.
* random swap (RS), ``n`` times: two different word positions swap their words.
* random deletion (RD): each word is deleted with probability ``alpha``; if every word would go, one
  random word is kept; a one-word text is left as is.

The text is split into word tokens (``\\w+`` with inner apostrophes) and punctuation tokens, as
:func:`cfaug.nlp.tokens.tokenize` does but keeping case; the operations act on the words only
(punctuation keeps its place unless words move around it) and the result is joined with single spaces
(``"good, fine."`` -> ``"good , fine ."``). Each augmented sentence applies one operation chosen at
random (the reference writes equal numbers per operation; here the mix is random), and the whole is
deterministic for a seed. The label of an augmented text is its original's.

>>> random_swap(tokenize("good, fine."), 1, random.Random(0))
['fine', ',', 'good', '.']
>>> eda("", n_aug=3)
['']
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

_TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]", re.UNICODE)

#: the stop words of the EDA reference implementation (NLTK's English list, trimmed)
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves what which who whom this that these those am is are
was were be been being have has had having do does did doing a an the and but if or because as until while
of at by for with about against between into through during before after above below to from up down in
out on off over under again further then once here there when where why how all any both each few more most
other some such no nor only own same so than too very s t can will just don should now
""".split())

OPERATIONS = ("synonym_replacement", "random_insertion", "random_swap", "random_deletion")


def tokenize(text: str) -> list[str]:
    """Word and punctuation tokens, case kept."""
    return _TOKEN.findall(text)


def _is_word(token: str) -> bool:
    return bool(re.match(r"\w", token))


def _synonyms_of(word: str, synonyms: Mapping[str, Sequence[str]]) -> list[str]:
    return [s for s in synonyms.get(word.lower(), ()) if s and s.lower() != word.lower()]


def synonym_replacement(tokens: Sequence[str], n: int, rng: random.Random,
                        synonyms: Mapping[str, Sequence[str]]) -> list[str]:
    """Replace up to ``n`` distinct non-stop words (all their occurrences) by a random synonym each."""
    out = list(tokens)
    candidates = sorted({t.lower() for t in out if _is_word(t) and t.lower() not in STOP_WORDS})
    rng.shuffle(candidates)
    replaced = 0
    for word in candidates:
        options = _synonyms_of(word, synonyms)
        if options:
            choice = rng.choice(options)
            out = [choice if t.lower() == word else t for t in out]
            replaced += 1
        if replaced >= n:
            break
    return out


def random_insertion(tokens: Sequence[str], n: int, rng: random.Random,
                     synonyms: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Insert ``n`` words at random positions: synonyms of random words when ``synonyms`` is given, else
    copies of random non-stop words of the text."""
    out = list(tokens)
    words = [t for t in tokens if _is_word(t)]
    content = [t for t in words if t.lower() not in STOP_WORDS]
    for _ in range(n):
        new = None
        if synonyms:
            for _try in range(10):
                options = _synonyms_of(rng.choice(words), synonyms) if words else []
                if options:
                    new = rng.choice(options)
                    break
        elif content:
            new = rng.choice(content)
        if new is None:
            break
        out.insert(rng.randint(0, len(out)), new)
    return out


def random_swap(tokens: Sequence[str], n: int, rng: random.Random) -> list[str]:
    """Swap the words at two different random word positions, ``n`` times."""
    out = list(tokens)
    positions = [i for i, t in enumerate(out) if _is_word(t)]
    if len(positions) < 2:
        return out
    for _ in range(n):
        i, j = rng.sample(positions, 2)
        out[i], out[j] = out[j], out[i]
    return out


def random_deletion(tokens: Sequence[str], p: float, rng: random.Random) -> list[str]:
    """Delete each word with probability ``p`` (punctuation stays); keep one random word if all would go;
    leave a one-word text as is."""
    positions = [i for i, t in enumerate(tokens) if _is_word(t)]
    if len(positions) <= 1:
        return list(tokens)
    drop = {i for i in positions if rng.random() < p}
    if len(drop) == len(positions):
        drop.discard(rng.choice(positions))
    return [t for i, t in enumerate(tokens) if i not in drop]


def _check(alpha: float, n_aug: int) -> None:
    if not 0 < alpha <= 0.5:
        raise ValueError(f"alpha must be in (0, 0.5], got {alpha}")
    if n_aug < 1:
        raise ValueError(f"n_aug must be at least 1, got {n_aug}")


def eda(text: str, alpha: float = 0.1, n_aug: int = 1, seed: int = 0,
        synonyms: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """``n_aug`` augmented versions of ``text``, each made by one randomly chosen operation (see module
    docstring). A text without words is returned alone: ``[text]``."""
    _check(alpha, n_aug)
    tokens = tokenize(text)
    n_words = sum(_is_word(t) for t in tokens)
    if n_words == 0:
        return [text]
    n = max(1, int(alpha * n_words + 0.5))
    syn = {k.lower(): list(v) for k, v in synonyms.items()} if synonyms else None
    ops = OPERATIONS if syn else OPERATIONS[1:]
    rng = random.Random(seed)
    out = []
    for _ in range(n_aug):
        op = rng.choice(ops)
        if op == "synonym_replacement":
            new = synonym_replacement(tokens, n, rng, syn or {})
        elif op == "random_insertion":
            new = random_insertion(tokens, n, rng, syn)
        elif op == "random_swap":
            new = random_swap(tokens, n, rng)
        else:
            new = random_deletion(tokens, alpha, rng)
        out.append(" ".join(new))
    return out


def eda_dataset(texts: Sequence[str], labels: Sequence[str], alpha: float = 0.1, n_aug: int = 1, seed: int = 0,
                synonyms: Mapping[str, Sequence[str]] | None = None,
                include_original: bool = True) -> tuple[list[str], list[str]]:
    """EDA over a labelled dataset: for each text, the original (unless ``include_original`` is False)
    followed by its ``n_aug`` augmentations, all with the original's label. Each text's seed is drawn
    from ``seed``, so the output depends only on the inputs and ``seed``."""
    if len(texts) != len(labels):
        raise ValueError(f"got {len(texts)} texts but {len(labels)} labels")
    _check(alpha, n_aug)
    rng = random.Random(seed)
    out_texts: list[str] = []
    out_labels: list[str] = []
    for text, label in zip(texts, labels):
        augmented = eda(text, alpha, n_aug, rng.getrandbits(32), synonyms)
        if include_original:
            out_texts.append(text)
            out_labels.append(label)
        out_texts += augmented
        out_labels += [label] * len(augmented)
    return out_texts, out_labels
