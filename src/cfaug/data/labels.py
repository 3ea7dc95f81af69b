"""Label normalisation: map the many spellings found in real files to one canonical label per class."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cfaug.quoting import quote, quote_list

#: Aliases for well-known label sets. Keys are lower-cased, stripped surface forms.
SENTIMENT_ALIASES: dict[str, str] = {
    **{k: "positive" for k in ("positive", "pos", "p", "1", "1.0", "true", "+", "+1", "good")},
    **{k: "negative" for k in ("negative", "neg", "n", "0", "0.0", "false", "-", "-1", "bad")},
}
NLI_ALIASES: dict[str, str] = {
    **{k: "entailment" for k in ("entailment", "entails", "entail", "e", "0")},
    **{k: "neutral" for k in ("neutral", "neu", "1")},
    **{k: "contradiction" for k in ("contradiction", "contradicts", "contradict", "c", "2")},
}
STYLE_ALIASES: dict[str, str] = {
    **{k: "formal" for k in ("formal", "fml", "formal style")},
    **{k: "informal" for k in ("informal", "inf", "casual", "colloquial", "informal style")},
}


#: numeric codings accepted for each label set (numbers outside them stop a run instead of being guessed)
SENTIMENT_CODINGS = (("0", "1"), ("-1", "1"))
NLI_CODINGS = (("0", "1", "2"),)


class LabelError(ValueError):
    """A label that cannot be mapped to the task's label set."""


class LabelSpace:
    """The labels of a task, their aliases, and the surface form each label had in the input.

    ``canonical(raw)`` maps any accepted spelling to its canonical label and changes nothing; ``read(raw)``
    does the same for a label read from the input and keeps the first spelling seen of each label.
    ``surface(label)`` gives that spelling (``"Positive"`` stays ``"Positive"`` in the output, however a
    target was spelled), so every label written into an output row is spelled as the input spells it.
    """

    def __init__(self, labels: Iterable[str], aliases: Mapping[str, str] | None = None,
                 numeric_codings: Iterable[Iterable[str]] = ()) -> None:
        self.labels: tuple[str, ...] = tuple(labels)
        #: the sets of numbers that are a known coding of these labels (``("0", "1")`` for sentiment); a
        #: label column holding other numbers is not read with the numeric aliases
        self.numeric_codings: tuple[tuple[str, ...], ...] = tuple(tuple(c) for c in numeric_codings)
        self._aliases = {lab.lower(): lab for lab in self.labels}
        for k, v in (aliases or {}).items():
            if v in self.labels:
                self._aliases.setdefault(k.lower(), v)
        self._surface: dict[str, str] = {}

    def canonical(self, raw: object) -> str:
        """The canonical label ``raw`` spells (any accepted alias, any case); a :class:`LabelError` when it
        spells none, or is missing. Looking a spelling up this way leaves :meth:`surface` unchanged."""
        if raw is None:
            raise LabelError("missing label")
        if isinstance(raw, bool):
            raw = int(raw)
        key = str(raw).strip().lower()
        if key == "" or key in {"nan", "none", "null"}:
            raise LabelError("missing label")
        try:
            return self._aliases[key]
        except KeyError:
            raise LabelError(f"unknown label {quote(str(raw))}; expected one of {quote_list(self.labels)}") from None

    def read(self, raw: object) -> str:
        """:meth:`canonical` of a label as the input spells it, keeping that spelling (the first one seen
        of each label) for :meth:`surface`."""
        lab = self.canonical(raw)
        self._surface.setdefault(lab, str(int(raw) if isinstance(raw, bool) else raw).strip())
        return lab

    def surface(self, label: str) -> str:
        """How the input spells ``label``: the first spelling :meth:`read` saw. A label the input never
        names is spelled like the labels it does name when they leave no doubt: in their case
        (``Negative`` read: ``Positive``; ``NEGATIVE``: ``POSITIVE``), or in the one numeric coding that
        holds them (``0`` read: ``1``); else it is the canonical name."""
        seen = self._surface.get(label)
        if seen is not None:
            return seen
        return self._spelled_like_seen(label) or label

    def observe_surface(self, label: str, surface: str) -> None:
        """Keep ``surface`` as the input's spelling of ``label`` unless one was seen already."""
        self._surface.setdefault(label, surface)

    def _spelled_like_seen(self, label: str) -> str | None:
        """``label`` in the case or numeric coding of the spellings seen (None when they do not tell)."""
        seen = {lab: s for lab, s in self._surface.items() if lab in self.labels}
        if not seen or label not in self.labels:
            return None
        if all(s.lower() == lab.lower() for lab, s in seen.items()):
            for style in (str.upper, str.lower, _capitalized):
                if all(s == style(s) and any(ch.isalpha() for ch in s) for s in seen.values()):
                    return style(label)
            return None
        fits = [c for c in self.numeric_codings if len(c) == len(self.labels)
                and all(_same_number(s, c[self.labels.index(lab)]) for lab, s in seen.items())]
        return fits[0][self.labels.index(label)] if len(fits) == 1 else None


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:].lower()


def _same_number(text: str, number: str) -> bool:
    try:
        return float(text) == float(number)
    except ValueError:
        return False
