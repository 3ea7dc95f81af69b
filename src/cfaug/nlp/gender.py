"""Gender word swapping ("he" -> "she", "actor" -> "actress") with the WinoBias and GN-GloVe word lists.

The lists ship unchanged in ``cfaug/resources/gender/`` (see its README.md): WinoBias's
``generalized_swaps.txt`` and ``extra_gendered_words.txt`` (uclanlp/corefBias, MIT) and GN-GloVe's
``male_word_file.txt`` / ``female_word_file.txt`` (uclanlp/gn_glove, Apache-2.0). :func:`gender_pairs`
turns them into one mapping:

* **Symmetric.** Pairs are taken in order of trust: cfaug's own table (pronouns, titles and a few fixes,
  :data:`OWN_PAIRS`), then ``generalized_swaps.txt``, ``extra_gendered_words.txt``, the GN-GloVe lists. A
  pair is kept as a two-way pair when neither word has a partner yet, so ``pairs[pairs[w]] == w`` for these
  words. A word whose partner is already taken maps one way only (``lord -> lady`` while ``lady <->
  gentleman``; ``monk`` keeps ``nun``, ``priest <-> priestess``). Every target is itself a key, and the
  one-way words are listed by :func:`one_way_words`.
* **Pronouns** (decided here): ``he <-> she``, ``himself <-> herself``, ``him -> her``, ``hers -> his``,
  ``his -> her`` and ``her -> his`` in the mapping; the swap functions resolve the ambiguous ones by their
  Penn tag: "her" as a possessive (``PRP$``) -> "his", as an object (``PRP``) -> "him"; "his" as a
  determiner (``PRP$``) -> "her", standing alone (``PRP``, "the book is his"; also a "his" tagged ``PRP$``
  that no noun, adjective, adverb or number follows) -> "hers".
* **Titles**: ``mr <-> mrs``, ``ms -> mr``, ``miss -> mr`` (with or without the period, which is kept as
  written). Titles without a period and "miss" are swapped only when capitalized and tagged as nouns, so "I
  miss her" keeps its verb and "a near miss" its noun.
* **Left out**: entries that are not swaps of a person's gender or are misspelt in the sources (body parts,
  hormones, drugs, sexual orientations, farm animals, "macho/effeminate", "baritone/mezzo",
  "governor/governess", "bloke/wench", typos such as "mentleman" and "godess"), multi-word entries
  (``hair_salon``); see :data:`EXCLUDED`.
* **First names** are not in the lists; ``names=True`` adds :data:`NAME_PAIRS`, common US first names paired
  by hand (written for cfaug), swapped only as proper nouns (``NNP``/``NNPS``) in Title case.

Swapping works on tokens, so words inside other words ("the", "heat", "shell") never change, and the case of
each word is kept ("He" -> "She", "HIS" -> "HER"). Verbs are not swapped (tags ``VB*``) except the verb forms
that are in the lists ("fathered" -> "mothered") and words the dictionary knows only in another class (a
"sir" the tagger took for a verb).

>>> swap_gender("He thanked her for his book.")[0]
'She thanked him for her book.'
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from cfaug.nlp.inflect import match_case, plausible_tag

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

#: cfaug's own pairs, taken before the lists (pronouns, titles, and preferred partners the lists get wrong)
OWN_PAIRS: tuple[tuple[str, str], ...] = (
    ("he", "she"), ("himself", "herself"), ("his", "her"), ("him", "her"), ("hers", "his"),
    ("mr", "mrs"), ("mr.", "mrs."), ("ms", "mr"), ("ms.", "mr."), ("miss", "mr"),
    ("priest", "priestess"), ("priests", "priestesses"), ("monk", "nun"), ("monks", "nuns"),
    ("god", "goddess"), ("gods", "goddesses"), ("baron", "baroness"), ("barons", "baronesses"),
    ("hero", "heroine"), ("heroes", "heroines"),
)

#: words of the lists that are no swap of a person's gender, or misspelt there
EXCLUDED = frozenset({
    # body, hormones, drugs, medicine
    "penis", "clitoris", "vagina", "semen", "female_ejaculation", "prostate", "skene_gland", "prostatic_utricle",
    "womb", "uterus", "sperm", "ovum", "testosterone", "estradiol", "androgen", "estrogen", "andropause",
    "menopause", "andrology", "obstetrics", "cialis", "viagra",
    # orientation, attitudes, things
    "gay", "gays", "lesbian", "lesbians", "macho", "effeminate", "masculism", "feminism", "beard", "beards",
    "toque", "toques", "brideprice", "dowry", "barbershop", "hair_salon", "monastery", "convent",
    "baritone", "mezzo", "paramour", "bloke", "blokes", "wench", "wenches", "suitor", "suitress",
    "governor", "governors", "governess", "governesses", "stud", "studs", "minx", "minxes",
    # farm animals
    "bull", "bulls", "cow", "cows", "stallion", "mare", "gelding", "colt", "colts", "filly", "fillies",
    "rooster", "roosters", "hen", "hens", "deer", "doe",
    # misspellings in the sources
    "mentleman", "stailor", "adultor", "adultors", "godess", "godesses", "barnoesses", "seamstress'",
})

#: common US first names paired by hand (written for cfaug); used only with ``names=True``. Names that are
#: also common words (Mark, Will, Grace, Rose, Jordan ...) are left out.
NAME_PAIRS: tuple[tuple[str, str], ...] = (
    ("james", "mary"), ("john", "patricia"), ("robert", "jennifer"), ("michael", "linda"),
    ("william", "elizabeth"), ("david", "barbara"), ("richard", "susan"), ("joseph", "jessica"),
    ("thomas", "sarah"), ("charles", "karen"), ("christopher", "nancy"), ("daniel", "lisa"),
    ("matthew", "betty"), ("anthony", "margaret"), ("donald", "sandra"), ("steven", "ashley"),
    ("paul", "kimberly"), ("andrew", "emily"), ("joshua", "donna"), ("kenneth", "michelle"),
    ("kevin", "dorothy"), ("brian", "carol"), ("george", "amanda"), ("edward", "melissa"),
    ("ronald", "deborah"), ("timothy", "stephanie"), ("jason", "rebecca"), ("jeffrey", "laura"),
    ("ryan", "sharon"), ("jacob", "cynthia"), ("gary", "kathleen"), ("nicholas", "amy"),
    ("eric", "shirley"), ("jonathan", "angela"), ("stephen", "helen"), ("larry", "anna"),
    ("justin", "brenda"), ("scott", "pamela"), ("brandon", "nicole"), ("benjamin", "emma"),
    ("samuel", "samantha"), ("gregory", "christine"), ("raymond", "debra"), ("alexander", "rachel"),
    ("patrick", "catherine"), ("jack", "carolyn"), ("dennis", "janet"), ("jerry", "ruth"),
    ("peter", "diane"), ("adam", "julie"), ("henry", "joyce"), ("nathan", "victoria"),
    ("douglas", "christina"), ("walter", "joan"), ("harold", "lauren"), ("jeremy", "olivia"),
    ("roger", "cheryl"), ("gerald", "martha"), ("arthur", "hannah"), ("albert", "sophia"),
)

#: titles swapped only when capitalized and tagged as nouns ("Miss Lee", not "a near miss" or "I miss her")
_TITLES = {"mr", "mrs", "ms", "miss"}
#: titles before a name, with their counterparts there ("Sir Michael" -> "Dame Michael", not the "ma'am" of
#: "yes, sir")
_NAME_TITLES = {"sir": "dame", "dame": "sir", "lord": "lady", "lady": "lord"}
#: verb forms that are gendered words of the lists
_VERB_FORMS = {"fathered", "mothered"}
_FILES = ("generalized_swaps.txt", "extra_gendered_words.txt")
_lock = threading.Lock()


def _read(name: str) -> str:
    return (resources.files("cfaug.resources") / "gender" / name).read_text(encoding="utf-8")


def _list_pairs() -> list[tuple[str, str]]:
    """Directed pairs of the bundled lists, in order of trust (the GN-GloVe lists both ways)."""
    out: list[tuple[str, str]] = []
    for name in _FILES:
        for line in _read(name).splitlines():
            parts = [p.strip().lower() for p in line.split("\t")]
            if len(parts) == 2 and all(parts):
                out.append((parts[0], parts[1]))
                if name == "extra_gendered_words.txt":    # written male<TAB>female: both ways
                    out.append((parts[1], parts[0]))
    male = [w.strip().lower() for w in _read("male_word_file.txt").splitlines()]
    female = [w.strip().lower() for w in _read("female_word_file.txt").splitlines()]
    for m, f in zip(male, female):
        if m and f:
            out += [(m, f), (f, m)]
    return out


def _usable(word: str) -> bool:
    return (word not in EXCLUDED and "_" not in word and " " not in word
            and word.replace("'", "").replace(".", "").isalpha())


@lru_cache(maxsize=2)
def _pairs(names: bool) -> tuple[dict[str, str], frozenset[str]]:
    own = list(OWN_PAIRS) + (list(NAME_PAIRS) if names else [])
    name_words = {w for pair in NAME_PAIRS for w in pair}
    candidates = [p for p in own + [(b, a) for a, b in own] + _list_pairs()
                  if _usable(p[0]) and _usable(p[1]) and p[0] != p[1]
                  and (names or not (p[0] in name_words or p[1] in name_words))]
    pairs: dict[str, str] = {}
    for a, b in candidates:                     # two-way pairs first
        if a not in pairs and b not in pairs:
            pairs[a], pairs[b] = b, a
    one_way = set()
    for a, b in candidates:                     # then words whose partner is already taken
        if a not in pairs and b in pairs:
            pairs[a] = b
            one_way.add(a)
    # the pronouns that stay ambiguous in the mapping (the swap functions decide them by tag)
    pairs["her"], pairs["his"], pairs["him"], pairs["hers"] = "his", "her", "her", "his"
    one_way |= {"him", "hers"}
    return pairs, frozenset(one_way)


def gender_pairs(names: bool = False) -> dict[str, str]:
    """Lower-case word -> the word of the opposite gender (a new dict each call; built once and cached).

    Two-way for nearly all words (``pairs[pairs[w]] == w``); the words mapped one way only are
    :func:`one_way_words`. ``names=True`` adds the first names of :data:`NAME_PAIRS`."""
    with _lock:
        return dict(_pairs(bool(names))[0])


def one_way_words(names: bool = False) -> frozenset[str]:
    """The words of :func:`gender_pairs` whose partner maps back to another word (``him -> her -> his``)."""
    with _lock:
        return _pairs(bool(names))[1]


#: tags of a word that can follow a possessive determiner ("his own car", "his best", "his cooking")
_AFTER_DETERMINER = ("NN", "JJ", "CD", "RB", "VBG", "VBN", "FW", "``", "AFX", "ADD", "NFP", "XX")


def _swap_one(word: str, tag: str, next_tag: str | None, pairs: dict[str, str], names: bool,
              name_words: set[str]) -> str | None:
    low = word.lower()
    if low in _NAME_TITLES and word[:1].isupper() and next_tag in {"NNP", "NNPS"}:
        return match_case(word, _NAME_TITLES[low])
    target = pairs.get(low)
    if target is None:
        return None
    if low in name_words:
        if not names or tag not in {"NNP", "NNPS"} or not word[:1].isupper():
            return None
    elif low in _TITLES and (tag not in {"NNP", "NN"} or not word[:1].isupper()):
        return None
    elif tag.startswith("VB") and low not in _VERB_FORMS and plausible_tag(word, tag).startswith("VB"):
        return None  # a verb ("to mother"), unless the dictionary says the word cannot be one ("sir")
    if low == "her":
        target = "his" if tag == "PRP$" else "him"
    elif low == "his":   # standing alone when so tagged, or when no noun phrase follows ("is his and")
        alone = tag == "PRP" or next_tag is None or not next_tag.startswith(_AFTER_DETERMINER)
        target = "hers" if alone else "her"
    return match_case(word, target)


def _swaps(tokens: Sequence[str], tags: Sequence[str], names: bool) -> list[tuple[int, str]]:
    if len(tokens) != len(tags):
        raise ValueError(f"{len(tokens)} tokens but {len(tags)} tags")
    pairs = _pairs(bool(names))[0]
    name_words = {w for pair in NAME_PAIRS for w in pair}
    out = []
    for i, (word, tag) in enumerate(zip(tokens, tags)):
        next_tag = tags[i + 1] if i + 1 < len(tags) else None
        new = _swap_one(word, tag or "", next_tag, pairs, names, name_words)
        if new is not None and new != word:
            out.append((i, new))
    return out


def swap_tokens(tokens: Sequence[str], tags: Sequence[str], *, names: bool = False) -> list[str]:
    """``tokens`` with every gendered word swapped; ``tags`` are their Penn Treebank tags (spaCy's
    ``token.tag_``), which decide "her" (``PRP$`` -> "his", ``PRP`` -> "him") and "his" (``PRP`` ->
    "hers"). First names change only with ``names=True``."""
    out = list(tokens)
    for i, new in _swaps(tokens, tags, names):
        out[i] = new
    return out


def swap_gender(doc_or_text: Doc | str, nlp: Language | None = None,
                names: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The text with every gendered word swapped, spacing and punctuation as they were, and the swaps made
    (``[{"i": token index, "from": word, "to": word}]``). A string is tagged with ``nlp`` (by default the
    bundled pipeline's tagger alone); a Doc must carry tags."""
    if isinstance(doc_or_text, str):
        if nlp is None:
            from cfaug.nlp.pipeline import load_pipeline

            nlp = load_pipeline(only=("tok2vec", "tagger"))
        doc = nlp(doc_or_text)
    else:
        doc = doc_or_text
    if len(doc) and not doc.has_annotation("TAG"):
        raise ValueError("swap_gender needs a Doc with part-of-speech tags (a pipeline with a tagger)")
    words = [t.text for t in doc]
    swaps = _swaps(words, [t.tag_ for t in doc], names)
    for i, new in swaps:
        words[i] = new
    text = "".join(w + t.whitespace_ for w, t in zip(words, doc))
    return text, [{"i": i, "from": doc[i].text, "to": new} for i, new in swaps]
