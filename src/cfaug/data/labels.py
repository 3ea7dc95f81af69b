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

    ``canonical(raw)`` maps any accepted spelling to its canonical label; ``surface(label)`` gives the
    spelling first seen in the input (``"Positive"`` stays ``"Positive"`` in the output), falling back
    to the canonical name.
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
        if raw is None:
            raise LabelError("missing label")
        if isinstance(raw, bool):
            raw = int(raw)
        key = str(raw).strip().lower()
        if key == "" or key in {"nan", "none", "null"}:
            raise LabelError("missing label")
        try:
            lab = self._aliases[key]
        except KeyError:
            raise LabelError(f"unknown label {quote(str(raw))}; expected one of {quote_list(self.labels)}") from None
        self._surface.setdefault(lab, str(raw).strip())
        return lab

    def surface(self, label: str) -> str:
        return self._surface.get(label, label)

    def observe_surface(self, label: str, surface: str) -> None:
        self._surface.setdefault(label, surface)
