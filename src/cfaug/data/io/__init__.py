"""Read and write CSV, TSV, JSONL, Parquet and Hugging Face ``datasets`` (objects or ``save_to_disk``
folders). Reading is row-tolerant: a bad row becomes a :class:`Reject` naming file, row and problem, and
every other row is still read.

What lives where (each module imports only those listed before it, and the rest of :mod:`cfaug.data`):

- :mod:`~cfaug.data.io.encoding`: undecodable bytes and lone surrogates, named as a problem or replaced;
- :mod:`~cfaug.data.io.errors`: :class:`DataError` (the input as a whole cannot be read) and :class:`Reject`
  (one row not used, its raw content cut short: :data:`RAW_MAX_CHARS`...);
- :mod:`~cfaug.data.io.formats`: :data:`FORMATS` and :func:`detect_format` (from a flag or the file name);
- :mod:`~cfaug.data.io.delimited`: the CSV/TSV reader, strict about quotes, never swallowing rows;
- :mod:`~cfaug.data.io.jsonl`: the JSONL reader;
- :mod:`~cfaug.data.io.aste_lines`: the ASTE-Data-V2 (``sentence####triplets``) reader and writer;
- :mod:`~cfaug.data.io.tables`: Parquet files, ``save_to_disk`` folders and in-memory tables
  (``datasets.Dataset``, DataFrame, list of dicts); pandas and datasets are imported only when used;
- :mod:`~cfaug.data.io.sources`: :func:`open_rows`, any source as raw rows (the entry point of every reader);
- :mod:`~cfaug.data.io.cells`: one cell's text, kind and numeric spelling; rows made JSON-safe;
- :mod:`~cfaug.data.io.label_codings`: the check that numeric labels are one of the task's codings;
- :mod:`~cfaug.data.io.dataset`: :func:`read_dataset`, rows to :class:`Dataset` records and rejects
  (:data:`DEFAULT_MAX_CHARS`);
- :mod:`~cfaug.data.io.atomic`: writing a file all at once (a temporary file beside it, renamed into place);
- :mod:`~cfaug.data.io.writers`: :func:`write_rows`, every format.
"""

from __future__ import annotations

from cfaug.data.io.dataset import DEFAULT_MAX_CHARS, Dataset, read_dataset
from cfaug.data.io.errors import (
    RAW_KEEP_CHARS,
    RAW_MAX_CHARS,
    RAW_MAX_FIELDS,
    DataError,
    Reject,
)
from cfaug.data.io.formats import FORMATS, detect_format
from cfaug.data.io.sources import open_rows
from cfaug.data.io.writers import output_kind, write_rows

__all__ = [
    "DEFAULT_MAX_CHARS", "FORMATS", "RAW_KEEP_CHARS", "RAW_MAX_CHARS", "RAW_MAX_FIELDS", "DataError", "Dataset",
    "Reject", "detect_format", "open_rows", "output_kind", "read_dataset", "write_rows",
]
