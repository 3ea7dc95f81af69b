"""LLM settings: validation, environment, resolution, what is recorded."""

from __future__ import annotations

import pytest

from cfaug.llm import LLMConfigError, LLMSettings
from cfaug.llm.settings import redact_url, split_urls


def test_values_from_a_command_line_are_converted():
    s = LLMSettings.from_mapping({"base_url": "http://a:1/v1,http://b:2", "concurrency": "8", "cache": "false",
                                  "max_budget": "2.5", "model": "m"})
    assert s.base_url == ["http://a:1/v1", "http://b:2/v1"]
    assert (s.concurrency, s.cache, s.max_budget) == (8, False, 2.5)


@pytest.mark.parametrize("data, problem", [
    ({"api_key": "sk-123"}, "keys are not settings"),
    ({"modle": "x"}, "unknown llm setting"),
    ({"concurrency": "many"}, "cannot read 'many' as int"),
    ({"concurrency": 0}, "at least 1"),
    ({"max_budget": -1}, "must be positive"),
    ({"api": "responses"}, "'chat' or 'completions'"),
    ({"base_url": "localhost:8000"}, "not an http"),
])
def test_bad_settings_are_explained(data, problem):
    with pytest.raises(LLMConfigError, match=problem):
        LLMSettings.from_mapping(data)


def test_resolution_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CFAUG_LLM_BASE_URL", "http://gpu-box:8000/v1")
    monkeypatch.setenv("CFAUG_LLM_MODEL", "llama")
    s = LLMSettings().resolved()
    assert (s.backend, s.base_url, s.model) == ("openai", ["http://gpu-box:8000/v1"], "llama")
    monkeypatch.delenv("CFAUG_LLM_BASE_URL")
    local = tmp_path / "model"
    local.mkdir()
    s = LLMSettings(model=str(local)).resolved()
    assert s.backend == "transformers"


def test_nothing_to_talk_to_is_explained():
    with pytest.raises(LLMConfigError, match="no LLM given"):
        LLMSettings(model="not-a-folder").resolved()
    with pytest.raises(LLMConfigError, match="no LLM model given"):
        LLMSettings(base_url=["http://x/v1"]).resolved()


def test_identity_leaves_out_operational_settings_and_public_redacts():
    s = LLMSettings.from_mapping({"base_url": "http://user:pw@host:8000/v1", "model": "m", "concurrency": 4})
    ident = s.identity()
    assert ident["model"] == "m" and "concurrency" not in ident and "base_url" not in ident
    assert s.public()["base_url"] == ["http://host:8000/v1"]
    assert "pw" not in str(s.public())


def test_url_helpers():
    assert split_urls(["http://h:1/", "http://h:2/v1/ , http://h:3/api"]) == [
        "http://h:1/v1", "http://h:2/v1", "http://h:3/api"]
    assert redact_url("https://h/v1") == "https://h/v1"
