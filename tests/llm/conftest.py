"""Fixtures for LLM tests: an isolated request cache for every test and LLM settings pointing at a test
server (the server fixtures ``llm_server`` and ``fake_llm`` are in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_cache(isolated_llm_cache: Path) -> Path:
    """Every LLM test gets its own default cache folder and no ambient LLM settings."""
    return isolated_llm_cache


@pytest.fixture
def llm_settings():
    """A factory: settings pointing at a server, with quick retries; keywords override."""
    from cfaug.llm import LLMSettings

    def make(srv, **overrides):
        data = {"base_url": srv.base_url, "model": "test-model", "retry_base_delay": 0.01,
                "retry_max_delay": 0.05, "max_retries": 6, "request_timeout": 5}
        data.update(overrides)
        return LLMSettings.from_mapping(data)

    return make
