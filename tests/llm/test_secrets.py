"""Secrets never leave the LLM layer: keys echoed by a server, passwords in base URLs."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import sqlite3

import pytest

from cfaug.llm import LLMConfigError, LLMRequestError, LLMSettings, LLMUnavailable, create_client
from cfaug.llm.redact import redact_secrets

KEY = "sk-live-0123456789abcdefKLMNOPQR"
MSG = [{"role": "user", "content": "hello there"}]


def _pieces(secret: str) -> list[str]:
    """The secret and recognisable parts of it (a server may echo a key half-masked)."""
    return [secret, secret[:8], secret[-6:], secret[8:20]]


def assert_hidden(secret: str, *texts: str) -> None:
    for text in texts:
        for piece in _pieces(secret):
            assert piece not in text, f"{piece!r} leaked into {text[:300]!r}"


def session(settings, messages=MSG, **params):
    """One client session: (answer or the exception raised, usage report, the client)."""
    async def go():
        client = create_client(settings)
        try:
            try:
                return await client.chat(messages, **params), client
            except Exception as exc:  # noqa: BLE001
                return exc, client
        finally:
            await client.aclose()
            client.close()
    result, client = asyncio.run(go())
    return result, client.report(), client


def cache_rows(client) -> list[str]:
    with sqlite3.connect(client.cache.path) as conn:
        return [" ".join(map(str, row)) for row in conn.execute("SELECT * FROM responses")]


def test_a_key_echoed_in_a_malformed_answer_is_redacted(fake_llm, llm_settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with fake_llm.FakeLLM() as srv:
        srv.add("hello", "fine", faults=["echo"] * 3)
        exc, report, client = session(llm_settings(srv, max_retries=2))
        assert srv.requests[0].headers["Authorization"] == f"Bearer {KEY}"  # the server did get the key
    assert isinstance(exc, LLMUnavailable)
    message = str(exc)
    assert "malformed answer" in message and "Authorization" in message
    assert_hidden(KEY, message, repr(exc.args), json.dumps(report, default=str), *cache_rows(client))


def test_a_key_echoed_in_an_error_answer_is_redacted(fake_llm, llm_settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with fake_llm.FakeLLM() as srv:
        srv.add("hello", "fine", faults=["echo-400"])
        exc, report, _ = session(llm_settings(srv))
    assert isinstance(exc, LLMRequestError) and "HTTP 400" in str(exc)
    assert_hidden(KEY, str(exc), json.dumps(report, default=str))


def test_a_key_in_an_answer_is_masked_before_it_is_returned_or_cached(fake_llm, llm_settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with fake_llm.FakeLLM() as srv:
        srv.add("hello", lambda body, prompt: f"you sent Authorization: Bearer {KEY}, key {KEY}.")
        answer, report, client = session(llm_settings(srv))
    assert answer.text.startswith("you sent Authorization: Bearer ")
    assert_hidden(KEY, answer.text, answer.model, json.dumps(report, default=str), *cache_rows(client))


def test_redact_secrets_masks_half_masked_echoes_of_a_key():
    text = f"Incorrect API key provided: {KEY[:8]}*************{KEY[-4:]}. And {KEY}."
    out = redact_secrets(text, secrets=[KEY])
    assert KEY[:8] not in out and KEY[-4:] not in out and "Incorrect API key provided" in out
    assert redact_secrets("nothing to hide here", secrets=[KEY]) == "nothing to hide here"


# -- user:password@ in a base URL ---------------------------------------------------------------------

def with_userinfo(url: str, userinfo: str = "alice:s3cr%40t-pw") -> str:
    return url.replace("http://", f"http://{userinfo}@")


def test_userinfo_is_sent_as_basic_auth_and_never_shown(fake_llm, llm_settings):
    with fake_llm.FakeLLM() as srv:
        srv.add("hello", "hi alice")
        settings = llm_settings(srv, base_url=with_userinfo(srv.base_url))
        answer, _, client = session(settings)
        header = srv.requests[0].headers["Authorization"]
    assert answer.text == "hi alice"
    assert header == "Basic " + base64.b64encode(b"alice:s3cr@t-pw").decode()  # percent-decoded
    shown = json.dumps(settings.public())
    assert "s3cr" not in shown and "alice" not in shown
    assert settings.public()["base_url"] == [srv.base_url]
    assert all("s3cr" not in ep.url and "s3cr" not in ep.base_url for ep in client.backend.endpoints)


def test_userinfo_never_appears_in_errors(fake_llm, llm_settings):
    with fake_llm.FakeLLM() as srv:
        srv.add("hello", "x", faults=["400"])
        exc, _, _ = session(llm_settings(srv, base_url=with_userinfo(srv.base_url)))
    assert isinstance(exc, LLMRequestError) and "s3cr" not in str(exc) and "alice" not in str(exc)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = LLMSettings.from_mapping({"base_url": f"http://alice:s3cr3t-pw@127.0.0.1:{port}/v1", "model": "m",
                                         "max_retries": 1, "retry_base_delay": 0.01})
    exc, _, _ = session(settings)
    assert isinstance(exc, LLMUnavailable) and f"127.0.0.1:{port}" in str(exc)
    assert "s3cr3t" not in str(exc) and "alice" not in str(exc)


def test_userinfo_and_an_api_key_together_are_refused_before_any_request(fake_llm, llm_settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with fake_llm.FakeLLM() as srv:
        with pytest.raises(LLMConfigError, match="one or the other") as info:
            create_client(llm_settings(srv, base_url=with_userinfo(srv.base_url)))
        assert srv.count() == 0
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "basic auth" in message
    assert "s3cr" not in message
    assert_hidden(KEY, message)


# -- a key in a base URL's query string ---------------------------------------------------------------

QUERY_KEY = "q-secret-0123456789abcdefXYZ"


def test_a_query_string_is_sent_after_the_path_and_never_shown(fake_llm, llm_settings):
    with fake_llm.FakeLLM() as srv:
        srv.add("hello", "fine")
        srv.add("other", "x", faults=["400"])
        settings = llm_settings(srv, base_url=f"{srv.base_url}?key={QUERY_KEY}&api-version=2024-06-01")
        answer, _, client = session(settings)
        refused, _, _ = session(settings, messages=[{"role": "user", "content": "other"}])
        assert srv.requests[0].path == "/v1/chat/completions"  # the query does not swallow the path
    assert answer.text == "fine"
    assert isinstance(refused, LLMRequestError) and "?key=[redacted]&api-version=[redacted]" in str(refused)
    assert_hidden(QUERY_KEY, str(refused), json.dumps(settings.public()),
                  *(ep.base_url for ep in client.backend.endpoints))


def test_a_query_string_is_redacted_in_connection_errors_and_setting_errors():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = LLMSettings.from_mapping({"base_url": f"http://127.0.0.1:{port}/v1?token={QUERY_KEY}", "model": "m",
                                         "max_retries": 1, "retry_base_delay": 0.01})
    exc, _, _ = session(settings)
    assert isinstance(exc, LLMUnavailable) and "check the base URL" in str(exc)  # could not connect: the hint
    assert "?token=[redacted]" in str(exc)
    assert_hidden(QUERY_KEY, str(exc))
    for url in (f"http://host:port/v1?key={QUERY_KEY}", f"ftp://host/v1?key={QUERY_KEY}"):
        with pytest.raises(LLMConfigError) as info:
            LLMSettings.from_mapping({"base_url": url, "model": "m"})
        assert "key=[redacted]" in str(info.value)
        assert_hidden(QUERY_KEY, str(info.value))


def test_a_query_key_in_a_recorded_command_line_is_masked():
    from cfaug.llm.redact import redact_argv

    argv = redact_argv(["cfaug", "augment", "--llm-base-url", f"http://u:pw@h/v1?key={QUERY_KEY}"])
    assert argv[-1] == "http://h/v1?key=[redacted]"


# -- values that look like keys -----------------------------------------------------------------------

@pytest.mark.parametrize("value", [KEY, "sk-abcdefghijklmnopqrstuvwx", "hf_AbCdEfGhIjKlMnOpQrStUv",
                                   "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "dGhpcyBpcyBhIHNlY3JldCBrZXk=",
                                   "a1b2c3d4e5f6a7b8c9d0e1f2", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig"])
def test_keys_look_like_keys(value):
    from cfaug.llm.redact import looks_like_key

    assert looks_like_key(value)


@pytest.mark.parametrize("value", ["OPENAI_API_KEY", "MY_LLM_KEY_2", "GROQ_API_KEY", "reviews.tsv",
                                   "/home/me/data/reviews_2024_final.tsv", "http://localhost:8000/v1", "positive",
                                   "meta-llama/Meta-Llama-3-8B-Instruct", "Meta-Llama-3-8B-Instruct",
                                   "self-refine-feedback-sentiment", "--classifier-background-typo", "short-1", 12345])
def test_names_paths_and_urls_do_not(value):
    from cfaug.llm.redact import looks_like_key

    assert not looks_like_key(value)


def test_a_missing_variable_is_named_unless_its_name_looks_like_a_key(llm_server, llm_settings):
    with pytest.raises(LLMConfigError, match="MY_MISSING_KEY is not set"):
        create_client(llm_settings(llm_server, api_key_env="MY_MISSING_KEY"))
    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"  # a valid variable name, but a GitHub token's shape
    with pytest.raises(LLMConfigError, match="looks like a key and is not shown") as info:
        create_client(llm_settings(llm_server, api_key_env=token))
    assert_hidden(token, str(info.value))
