"""The OpenAI-compatible HTTP backend against the loopback test server: requests, retries, errors."""

from __future__ import annotations

import asyncio
import socket

import pytest

from cfaug.llm import (BudgetExceeded, LLMConfigError, LLMRequestError, LLMSettings, LLMUnavailable,
                       create_client)

MSG = [{"role": "user", "content": "hello there"}]


def ask(settings, messages=MSG, n=1, **params):
    """Send ``n`` copies of a chat request (different samples) through a fresh client, return answers."""
    async def go():
        client = create_client(settings)
        try:
            return await asyncio.gather(*(client.chat(messages, sample=i, **params) for i in range(n)))
        finally:
            await client.aclose()
            client.close()
    return asyncio.run(go())


def test_chat_request_and_answer(llm_server, llm_settings):
    llm_server.add("hello", "general kenobi")
    [answer] = ask(llm_settings(llm_server), max_tokens=7, temperature=0.5, seed=11)
    assert answer.text == "general kenobi"
    assert (answer.tokens_in, answer.tokens_out) == (2, 2)
    assert not answer.cached and answer.attempts == 1
    [req] = llm_server.requests
    assert req.path == "/v1/chat/completions"
    assert req.body["model"] == "test-model"
    assert req.body["messages"] == MSG
    assert (req.body["max_tokens"], req.body["temperature"], req.body["seed"]) == (7, 0.5, 11)
    assert "Authorization" not in req.headers  # no key in the environment, none sent


def test_completions_endpoint(llm_server, llm_settings):
    llm_server.add("Once upon", " a time")

    async def go():
        client = create_client(llm_settings(llm_server, api="completions"))
        try:
            return await client.complete("Once upon", max_tokens=3)
        finally:
            await client.aclose()
            client.close()

    answer = asyncio.run(go())
    assert answer.text == " a time"
    [req] = llm_server.requests
    assert req.path == "/v1/completions" and req.body["prompt"] == "Once upon"


@pytest.mark.parametrize("fault", ["429", "500", "503", "malformed", "drop", "empty"])
def test_transient_failures_are_retried(llm_server, llm_settings, fault):
    llm_server.retry_after = "0"
    llm_server.add("hello", "fine", faults=[fault, fault])
    [answer] = ask(llm_settings(llm_server))
    assert answer.text == "fine"
    assert answer.attempts == 3
    assert [r.outcome for r in llm_server.requests] == [fault, fault, "ok"]


def test_retry_after_is_honoured(llm_server, llm_settings):
    llm_server.retry_after = "1"
    llm_server.add("hello", "fine", faults=["429"])
    [answer] = ask(llm_settings(llm_server))
    assert answer.text == "fine"
    first, second = llm_server.requests
    assert second.time - first.time >= 0.95  # waited at least the second the server asked for


def test_timeout_is_retried(fake_llm, llm_settings):
    with fake_llm.FakeLLM(slow_seconds=1.5) as srv:
        srv.add("hello", "in time", faults=["slow"])
        [answer] = ask(llm_settings(srv, request_timeout=0.3))
    assert answer.text == "in time" and answer.attempts == 2


def test_retries_exhausted_stop_the_run_cleanly(llm_server, llm_settings):
    llm_server.add("hello", "never", faults=["500"] * 3)
    with pytest.raises(LLMUnavailable, match="after 3 attempts") as info:
        ask(llm_settings(llm_server, max_retries=2))
    assert info.value.clean_stop and info.value.aborts_run
    assert llm_server.count() == 3


def test_unreachable_server_says_so():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = LLMSettings.from_mapping({"base_url": f"http://127.0.0.1:{port}/v1", "model": "m",
                                         "max_retries": 1, "retry_base_delay": 0.01})
    with pytest.raises(LLMUnavailable, match="no answer received from it yet"):
        ask(settings)


def test_bad_request_fails_only_that_request(llm_server, llm_settings):
    llm_server.add("hello", "x", faults=["400"])
    with pytest.raises(LLMRequestError, match="HTTP 400 prompt too long") as info:
        ask(llm_settings(llm_server))
    assert not info.value.aborts_run
    assert llm_server.count() == 1  # not retried


def test_unknown_model_is_a_configuration_error(llm_server, llm_settings):
    llm_server.add("hello", "x", faults=["404"])
    with pytest.raises(LLMConfigError, match="check the model name 'test-model'"):
        ask(llm_settings(llm_server))


def test_rejected_key_is_reported_without_the_key(fake_llm, llm_settings, monkeypatch):
    key = "sk-secret-ABCDEFGH12345678"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with fake_llm.FakeLLM(api_key="the-right-one") as srv:
        with pytest.raises(LLMConfigError) as info:
            ask(llm_settings(srv))
        assert srv.requests[0].headers["Authorization"] == f"Bearer {key}"
    message = str(info.value)
    assert "HTTP 401" in message and "OPENAI_API_KEY" in message
    assert key not in message and "sk-sec" not in message and "5678" not in message


def test_key_from_a_named_variable(fake_llm, llm_settings, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", "the-right-one")
    with fake_llm.FakeLLM(api_key="the-right-one") as srv:
        srv.add("hello", "welcome")
        [answer] = ask(llm_settings(srv, api_key_env="MY_LLM_KEY"))
    assert answer.text == "welcome"


def test_missing_named_key_variable_fails_before_any_request(llm_server, llm_settings):
    with pytest.raises(LLMConfigError, match="MY_MISSING_KEY is not set"):
        create_client(llm_settings(llm_server, api_key_env="MY_MISSING_KEY"))
    assert llm_server.count() == 0


def test_requests_are_load_balanced(fake_llm, llm_settings):
    with fake_llm.FakeLLM(latency=0.02) as a, fake_llm.FakeLLM(latency=0.02) as b:
        answers = ask(llm_settings(a, base_url=f"{a.base_url},{b.base_url}", concurrency=8), n=40)
        assert len(answers) == 40
        assert a.count() + b.count() == 40
        assert a.count() >= 10 and b.count() >= 10


def test_a_dead_endpoint_is_routed_around(fake_llm, llm_settings):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with fake_llm.FakeLLM() as live:
        answers = ask(llm_settings(live, base_url=[dead, live.base_url], concurrency=4), n=10)
        assert len(answers) == 10 and live.count() == 10


def test_a_rate_limited_endpoint_is_paused_while_another_serves(fake_llm, llm_settings):
    with fake_llm.FakeLLM() as a, fake_llm.FakeLLM() as b:
        b.retry_after = "120"
        b.fail_next("429")

        async def go():
            client = create_client(llm_settings(a, base_url=[a.base_url, b.base_url], concurrency=4))
            try:
                # b answers its first request with "retry after 120 s": b is paused and that request
                # goes to a, so everything finishes long before two minutes
                return await asyncio.wait_for(
                    asyncio.gather(*(client.chat(MSG, sample=i) for i in range(4))), timeout=20)
            finally:
                await client.aclose()
                client.close()

        answers = asyncio.run(go())
        assert [x.text for x in answers] == ["OK"] * 4
        outcomes = [r.outcome for r in a.requests + b.requests]
        assert outcomes.count("429") == 1 and outcomes.count("ok") == 4


def test_budget_error_class_is_a_clean_stop():
    assert BudgetExceeded.clean_stop and BudgetExceeded.aborts_run


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])  # vLLM and llama.cpp; Ollama
def test_reasoning_beside_the_content_is_kept_apart_and_cached(llm_server, llm_settings, fake_llm, field):
    shaped = fake_llm.Shaped("<revised>A dull film.</revised>", reasoning="The user wants negative.",
                             reasoning_field=field)
    llm_server.add("hello", shaped)
    [answer] = ask(llm_settings(llm_server), max_tokens=50)
    assert answer.text == "<revised>A dull film.</revised>" and answer.reasoning == "The user wants negative."
    assert answer.finish_reason == "stop" and not answer.truncated
    [again] = ask(llm_settings(llm_server), max_tokens=50)  # from the cache, reasoning included
    assert again.cached and again.reasoning == "The user wants negative." and llm_server.count() == 1


def test_a_cut_off_answer_says_so(llm_server, llm_settings, fake_llm):
    # vLLM with a reasoning parser, cut off while thinking: no content at all, finish_reason "length"
    llm_server.add("hello", fake_llm.cut_at_max_tokens(fake_llm.Shaped("<revised>A dull film.</revised>",
                                                                       reasoning="one two three four five six")))
    [answer] = ask(llm_settings(llm_server), max_tokens=4)
    assert answer.text == "" and answer.reasoning == "one two three four"
    assert answer.finish_reason == "length" and answer.truncated and answer.tokens_out == 4
    assert llm_server.requests[0].body["max_tokens"] == 4


def test_a_refusal_field_is_kept_apart_from_the_answer(llm_server, llm_settings, fake_llm):
    llm_server.add("hello", fake_llm.Shaped(None, refusal="I can't help with that."))
    [answer] = ask(llm_settings(llm_server))
    assert answer.text == "" and answer.refusal == "I can't help with that." and answer.refused
    [again] = ask(llm_settings(llm_server))  # and so it is cached
    assert again.cached and again.refusal == "I can't help with that." and llm_server.count() == 1


@pytest.mark.parametrize("fault, said", [("500", "HTTP 500 internal error"),
                                         ("malformed", "malformed answer: HTTP 200 with a body that is not an "
                                                       "OpenAI-compatible answer: {\"id\": \"x\""),
                                         ("empty", "(empty body)")])
def test_a_server_that_answers_badly_is_quoted_not_sent_to_check_its_url(llm_server, llm_settings, fault, said):
    llm_server.add("hello", "never", faults=[fault] * 2)
    with pytest.raises(LLMUnavailable) as info:
        ask(llm_settings(llm_server, max_retries=1))
    message = str(info.value)
    assert said in message and "check the base URL" not in message and "no answer received" not in message


def test_a_long_error_body_is_quoted_short(llm_server, llm_settings):
    llm_server.add("hello", "never", faults=["html-502"] * 2)
    with pytest.raises(LLMUnavailable) as info:
        ask(llm_settings(llm_server, max_retries=1))
    message = str(info.value)
    assert "HTTP 502 <html><body><h1>502 Bad Gateway</h1><p>upstream trouble</p>" in message
    assert len(message) < 600 and "characters)" in message
