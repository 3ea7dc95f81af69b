"""Reading tables: Parquet files, ``save_to_disk`` folders of Hugging Face ``datasets``, and rows already in
memory (a ``datasets.Dataset``, a DataFrame, a list of dicts). pandas and datasets are imported only when
a file of theirs is read."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cfaug.data.io.errors import DataError


def _iter_table(rows: Sequence[dict[str, Any]], columns: list[str]) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    return columns, ((i, dict(r)) for i, r in enumerate(rows, start=1))


def _iter_parquet(path: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    """Rows of a Parquet file (read whole with pandas)."""
    import pandas as pd

    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types
        raise DataError(f"{path}: cannot read Parquet: {exc}") from exc
    if len(df) == 0:
        raise DataError(f"{path}: the file has no rows")
    return _iter_table(df.to_dict(orient="records"), [str(c) for c in df.columns])


def _iter_saved_dataset(path: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, Any] | str]]]:
    """Rows of a folder written by ``datasets``' ``save_to_disk`` (one split, not a ``DatasetDict``)."""
    try:
        import datasets as hf
    except ImportError:  # pragma: no cover - datasets is a dependency
        raise DataError("reading Hugging Face datasets needs the 'datasets' package") from None
    try:
        ds = hf.load_from_disk(str(path))
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{path}: not a dataset saved with save_to_disk: {exc}") from exc
    if isinstance(ds, hf.DatasetDict):
        raise DataError(f"{path}: holds several splits ({', '.join(ds)}); pass the folder of one split")
    return _iter_table(ds, list(ds.column_names))


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "to_dict")
