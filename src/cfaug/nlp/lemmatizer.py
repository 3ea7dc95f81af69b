"""A table lemmatizer for spaCy pipelines: lemmas looked up by word form and part of speech.

The table is learned from a treebank (``fit_conllu``: each (form, UPOS, Penn tag) gets its most frequent gold
lemma) and keeps only the entries that lemminflect's rules, the fallback for every other word, get wrong, so
it stays small. It needs the part of speech, so it runs after the tagger and morphologizer. On UD
English-EWT it is more accurate than spaCy's trainable lemmatizer and costs almost no time (see
``bench/parser.results.md``).

The component is registered with spaCy as the factory ``cfaug_lemmatizer`` (through an entry point, so
``spacy.load`` finds it wherever cfaug is installed):

>>> nlp.add_pipe("cfaug_lemmatizer", name="lemmatizer")       # doctest: +SKIP
>>> nlp.get_pipe("lemmatizer").fit_conllu(["en_ewt-ud-train.conllu"])   # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc
from spacy.training import Example

#: universal parts of speech lemminflect has rules for
_RULES = {"NOUN", "VERB", "ADJ", "ADV", "AUX"}

Key = tuple[str, str, str]


@lru_cache(maxsize=200_000)
def rule_lemma(form: str, pos: str) -> str:
    """The lemma without a table: proper nouns keep their form, open-class words get lemminflect's lemma
    (its dictionary, then its rules for unknown words), every other word is lower-cased."""
    if pos == "PROPN":
        return form
    if pos in _RULES:
        import lemminflect

        found = lemminflect.getLemma(form, upos=pos, lemmatize_oov=True)
        if found:
            return found[0].lower() if form[:1].isupper() and form[1:].islower() else found[0]
    return form.lower()


class TableLemmatizer:
    """Sets ``token.lemma_`` from a (form, UPOS, Penn tag) table, then (lower-cased form, UPOS), then
    :func:`rule_lemma`. ``overwrite=False`` keeps lemmas an earlier component set."""

    def __init__(self, name: str = "lemmatizer", *, overwrite: bool = False) -> None:
        self.name = name
        self.overwrite = overwrite
        self.exact: dict[Key, str] = {}
        self.lower: dict[tuple[str, str], str] = {}

    def lemma(self, form: str, pos: str, tag: str = "") -> str:
        """The lemma of ``form`` with universal part of speech ``pos`` and Penn tag ``tag``."""
        found = self.exact.get((form, pos, tag))
        if found is None:
            found = self.lower.get((form.lower(), pos))
        return found if found is not None else rule_lemma(form, pos)

    def __call__(self, doc: Doc) -> Doc:
        lemma = self.lemma
        for token in doc:
            if self.overwrite or not token.lemma:
                token.lemma_ = lemma(token.text, token.pos_, token.tag_)
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterable[Doc]:
        """:meth:`__call__` over a stream (``nlp.pipe`` calls this)."""
        for doc in docs:
            yield self(doc)

    def fit(self, rows: Iterable[tuple[str, str, str, str]]) -> dict[str, int]:
        """Learn the table from (form, UPOS, Penn tag, gold lemma) rows; only entries the fallback would get
        wrong are kept. Returns counts for a build log."""
        exact: dict[Key, Counter[str]] = defaultdict(Counter)
        lower: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        n = 0
        for form, pos, tag, lemma in rows:
            if lemma in ("", "_"):
                continue
            exact[(form, pos, tag)][lemma] += 1
            lower[(form.lower(), pos)][lemma] += 1
            n += 1
        self.lower = {k: best for k, c in lower.items()
                      if (best := c.most_common(1)[0][0]) != rule_lemma(k[0], k[1])}
        self.exact = {}
        for (form, pos, tag), c in exact.items():
            best = c.most_common(1)[0][0]
            if best != self.lemma(form, pos):  # the lower-cased entry or the rules do not already give it
                self.exact[(form, pos, tag)] = best
        return {"tokens": n, "exact_entries": len(self.exact), "lowercase_entries": len(self.lower)}

    def fit_conllu(self, paths: Sequence[str | Path]) -> dict[str, int]:
        """:meth:`fit` on CoNLL-U files (multi-word token lines and empty nodes are skipped)."""
        return self.fit(_conllu_rows(paths))

    def score(self, examples: Iterable[Example], **kwargs: Any) -> dict[str, Any]:
        """``lemma_acc`` as spaCy's trainable lemmatizer reports it."""
        return Scorer.score_token_attr(examples, "lemma", **kwargs)

    # ------------------------------------------------------------------ serialisation (spaCy's protocol)
    def to_bytes(self, *, exclude: Sequence[str] = ()) -> bytes:
        return json.dumps({"exact": [[*k, v] for k, v in sorted(self.exact.items())],
                           "lower": [[*k, v] for k, v in sorted(self.lower.items())]},
                          ensure_ascii=False).encode("utf-8")

    def from_bytes(self, data: bytes, *, exclude: Sequence[str] = ()) -> TableLemmatizer:
        obj = json.loads(data.decode("utf-8"))
        self.exact = {(f, p, t): lem for f, p, t, lem in obj["exact"]}
        self.lower = {(f, p): lem for f, p, lem in obj["lower"]}
        return self

    def to_disk(self, path: str | Path, *, exclude: Sequence[str] = ()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / "table.json").write_bytes(self.to_bytes())

    def from_disk(self, path: str | Path, *, exclude: Sequence[str] = ()) -> TableLemmatizer:
        return self.from_bytes((Path(path) / "table.json").read_bytes())


def _conllu_rows(paths: Sequence[str | Path]) -> Iterable[tuple[str, str, str, str]]:
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip() or line.startswith("#"):
                    continue
                cols = line.rstrip("\n").split("\t")
                if len(cols) < 5 or "-" in cols[0] or "." in cols[0]:
                    continue
                yield cols[1], cols[3], cols[4], cols[2]


@Language.factory("cfaug_lemmatizer", default_config={"overwrite": False})
def make_lemmatizer(nlp: Language, name: str, overwrite: bool) -> TableLemmatizer:
    """spaCy factory of :class:`TableLemmatizer` (an empty table until fitted or loaded)."""
    return TableLemmatizer(name, overwrite=overwrite)


__all__ = ["TableLemmatizer", "make_lemmatizer", "rule_lemma"]
