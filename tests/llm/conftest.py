"""Fixtures for LLM tests: the loopback test server and an isolated request cache."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def load_server_module():
    """tests/llm/server.py, loaded by path (works whatever pytest's import mode)."""
    name = "cfaug_tests_llm_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("server.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


server = load_server_module()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own default cache folder and no ambient LLM settings."""
    cache = tmp_path / "llm-cache"
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return cache


@pytest.fixture
def llm_server() -> Iterator["server.FakeLLM"]:
    """A running test server (no latency, replies "OK" unless scripted)."""
    with server.FakeLLM() as srv:
        yield srv


@pytest.fixture
def fake_llm():
    """The server module (``FakeLLM``, ``echo_reply``...) for tests that build their own server."""
    return server


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
