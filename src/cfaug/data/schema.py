"""Column mapping between a user's file and cfaug's roles, with auto-detection of common names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cfaug.data.tasks import Task
from cfaug.quoting import quote, quote_list, shorten

TEXT_NAMES = ("text", "Text", "sentence", "review", "content", "document")
#: column names that mean "the label"; a column is only guessed as the label column from these names
LABEL_NAMES = ("label", "Label", "labels", "Sentiment", "sentiment", "gold_label", "class")
#: further names that mean the label of a rating task only (a star count is not a sentiment label)
RATING_LABEL_NAMES = ("rating", "Rating", "stars", "Stars", "score")
ID_NAMES = ("id", "ID", "Id", "idx", "uid")
PREMISE_NAMES = ("premise", "sentence1", "Premise")
HYPOTHESIS_NAMES = ("hypothesis", "sentence2", "Hypothesis")


class SchemaError(ValueError):
    """Columns named in the mapping are missing from the data."""


@dataclass
class Schema:
    """Which column holds each role's text, the label and the id. ``None`` id: row numbers are ids."""

    text_cols: dict[str, str] = field(default_factory=dict)
    label_col: str | None = None
    id_col: str | None = None
    #: what each raw label value means (``{"1": "negative", "5": "positive"}``); values not in it are rejected
    label_map: dict[str, str] = field(default_factory=dict)
    #: whether ``label_col`` was found by its name rather than given
    label_guessed: bool = field(default=False, compare=False)

    def resolve(self, columns: Sequence[str], task: Task, where: str,
                sample_values: Mapping[str, Sequence[str]] | None = None) -> Schema:
        """Fill unset columns from common names and check every named column exists. ``sample_values``
        (a few distinct values per column) make the error for a missing label column show what each
        column holds."""
        cols = list(columns)
        text_cols = dict(self.text_cols)
        defaults = {"text": TEXT_NAMES, "premise": PREMISE_NAMES, "hypothesis": HYPOTHESIS_NAMES}
        for role in task.roles:
            if role not in text_cols:
                found = next((c for c in defaults.get(role, ()) if c in cols), None)
                if found is None:
                    raise SchemaError(
                        f"{where}: no column for the {role!r} field; pass it with "
                        f"--{'text' if role == 'text' else role}-col (columns: {quote_list(cols)})"
                    )
                text_cols[role] = found
        names = LABEL_NAMES + (RATING_LABEL_NAMES if task.name == "rating" else ())
        label_col = self.label_col or next((c for c in names if c in cols), None)
        if label_col is None:
            seen = describe_values(sample_values or {}, [c for c in cols if c not in text_cols.values()])
            raise SchemaError(
                f"{where}: no label column: no column is named like a label ({', '.join(names)}); "
                f"columns: {quote_list(cols)}{seen}. Pass --label-col COLUMN, and --label-map "
                f"VALUE=LABEL,... when its values are not {task.name} labels "
                f"({', '.join(task.label_space.labels) or 'any'})")
        id_col = self.id_col
        if id_col is None:
            id_col = next((c for c in ID_NAMES if c in cols), None)
        resolved = Schema(text_cols=text_cols, label_col=label_col, id_col=id_col, label_map=dict(self.label_map),
                          label_guessed=self.label_col is None)
        missing = [c for c in resolved.columns() if c not in cols]
        if missing:
            raise SchemaError(f"{where}: missing column(s) {quote_list(missing)} (columns: {quote_list(cols)})")
        return resolved

    def to_config(self) -> dict[str, object]:
        """The mapping as a run's config records it (``label_map`` only when one was given)."""
        out: dict[str, object] = {"text_cols": dict(self.text_cols), "label_col": self.label_col, "id_col": self.id_col}
        if self.label_map:
            out["label_map"] = dict(self.label_map)
        return out

    def describe(self) -> str:
        """Which column plays which role, for a run's summary (``text=Text, label=Sentiment, id=row numbers``)."""
        parts = [f"{role}={col}" for role, col in self.text_cols.items()]
        label = f"label={self.label_col}" + (" (found by its name)" if self.label_guessed else "")
        if self.label_map:
            label += " mapped " + ", ".join(f"{k}={v}" for k, v in self.label_map.items())
        parts.append(label)
        parts.append(f"id={self.id_col or 'row numbers'}")
        return ", ".join(parts)

    def columns(self) -> list[str]:
        out = list(self.text_cols.values())
        if self.label_col:
            out.append(self.label_col)
        if self.id_col:
            out.append(self.id_col)
        return out


def describe_values(sample_values: Mapping[str, Sequence[str]], cols: Sequence[str], most: int = 6) -> str:
    """``"; values seen: 'stars': 1, 5"`` for the columns that have sample values (empty if none); at most
    ``most`` columns are described, the others counted."""
    parts = []
    described = [c for c in cols if sample_values.get(c)]
    for c in described[:most]:
        vals = list(sample_values.get(c, ()))
        shown = ", ".join(shorten(v, 30) for v in vals[:most]) + (", ..." if len(vals) > most else "")
        parts.append(f"{quote(c, 60)}: {shown}")
    if len(described) > most:
        parts.append(f"... and {len(described) - most:,} more columns")
    return "; values seen: " + "; ".join(parts) if parts else ""


def parse_label_map(spec: str | Mapping[str, str] | None, task: Task) -> dict[str, str]:
    """``"1=negative,2=negative,5=positive"`` (or a mapping) -> ``{"1": "negative", ...}``, each label checked
    against the task's labels."""
    if not spec:
        return {}
    if isinstance(spec, Mapping):
        pairs = [(str(k), str(v)) for k, v in spec.items()]
    else:
        pairs = []
        for part in str(spec).split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise SchemaError(f"--label-map expects VALUE=LABEL pairs separated by commas, got {quote(part.strip())}")
            k, v = part.split("=", 1)
            pairs.append((k, v))
    out: dict[str, str] = {}
    for k, v in pairs:
        key = k.strip()
        try:
            out[key] = task.label_space.read(v.strip())  # the map spells the labels the output writes
        except ValueError as exc:
            raise SchemaError(f"--label-map {shorten(f'{key}={v.strip()}')}: {exc}") from None
    return out
