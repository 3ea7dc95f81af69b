"""Fixtures shared by the method tests."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest


@pytest.fixture
def cli():
    """``cli(*argv) -> (exit code, stdout, stderr)``: the ``cfaug`` command run in this process."""
    from cfaug.cli import main

    def run(*argv: object) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main([str(a) for a in argv])
        return code, out.getvalue(), err.getvalue()

    return run


@pytest.fixture
def read_jsonl():
    """``read_jsonl(path) -> rows``: the objects of a JSONL file, blank lines skipped."""
    def read(path: Path) -> list[dict]:
        return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]

    return read
