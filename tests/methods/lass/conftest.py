"""Fixtures of the LASS tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread(one_torch_thread_per_module):
    """Every module here trains or runs tiny torch models, its module-scoped fixtures included: one thread."""
