"""The client: concurrency limit, usage report, closing."""

from __future__ import annotations

import asyncio

from cfaug.llm import create_client


def test_concurrency_limit_is_respected(fake_llm, llm_settings):
    with fake_llm.FakeLLM(latency=0.05) as srv:
        async def go():
            client = create_client(llm_settings(srv, concurrency=5))
            try:
                await asyncio.gather(*(client.chat([{"role": "user", "content": f"q{i}"}]) for i in range(40)))
            finally:
                await client.aclose()
                client.close()
        asyncio.run(go())
        assert srv.count() == 40
        assert srv.max_concurrent == 5


def test_report_and_purposes(llm_server, llm_settings):
    async def go():
        client = create_client(llm_settings(llm_server), tag="my-method")
        try:
            await client.chat([{"role": "user", "content": "a b c"}], purpose="generate")
            await client.chat([{"role": "user", "content": "d e"}], purpose="judge")
        finally:
            await client.aclose()
            client.close()
        return client.report()
    report = asyncio.run(go())
    assert report["llm_requests"] == 2 and report["llm_tokens_in"] == 5 and report["llm_tokens_out"] == 2
    assert report["llm_usage"]["my-method/judge"]["requests"] == 1


def test_usage_is_estimated_when_the_server_reports_none(llm_server, llm_settings, monkeypatch):
    payload = type(llm_server)._payload

    def without_usage(body, prompt, text):
        out = payload(body, prompt, text)
        del out["usage"]
        return out

    monkeypatch.setattr(type(llm_server), "_payload", staticmethod(without_usage))
    llm_server.add("count me", "twelve chars")

    async def go():
        client = create_client(llm_settings(llm_server))
        try:
            return await client.chat([{"role": "user", "content": "count me"}]), client.report()
        finally:
            await client.aclose()
            client.close()
    answer, report = asyncio.run(go())
    assert answer.usage_estimated and answer.tokens_out == 3
    assert "estimated" in report["llm_usage_estimated"]


def test_rate_limits_pace_the_requests(llm_server, llm_settings):
    from cfaug.llm import LLMClient
    from cfaug.llm.backends.openai_http import OpenAIBackend
    from cfaug.llm.ratelimit import Limits

    class Clock:
        now = 0.0
        slept: list = []

        def __call__(self):
            return self.now

        async def sleep(self, s):
            self.slept.append(s)
            self.now += s

    clock = Clock()
    settings = llm_settings(llm_server).resolved()

    async def go():
        client = LLMClient(OpenAIBackend(settings), limits=Limits(rpm=60, clock=clock, sleep=clock.sleep),
                           concurrency=1)
        try:
            for i in range(5):
                await client.chat([{"role": "user", "content": f"q{i}"}])
        finally:
            await client.aclose()
            client.close()

    asyncio.run(go())
    assert llm_server.count() == 5
    # one per second: the first two pass at once (burst), the next three each wait a second
    assert [round(s, 6) for s in clock.slept] == [1.0, 1.0, 1.0]


def _failing_session(settings, usage_file, *, cancel_after: float | None = None, n: int = 1):
    """Send ``n`` requests that get no answer through one client session writing ``usage_file``: return
    what each raised, and the report."""
    async def go():
        client = create_client(settings, tag="m", usage_file=usage_file)
        try:
            calls = [asyncio.ensure_future(client.chat([{"role": "user", "content": f"hello {i}"}], sample=i))
                     for i in range(n)]
            if cancel_after is not None:
                await asyncio.sleep(cancel_after)
                for c in calls:
                    c.cancel()
            return await asyncio.gather(*calls, return_exceptions=True), client
        finally:
            await client.aclose()
            client.close()
    outcomes, client = asyncio.run(go())
    return outcomes, client.report()


def test_requests_that_fail_for_good_are_counted_and_written(llm_server, llm_settings, tmp_path):
    from cfaug.llm import LLMRequestError, LLMUnavailable

    usage = tmp_path / "llm_usage.json"
    llm_server.add("hello 0", "never", faults=["500"] * 3)
    llm_server.add("hello 1", "never", faults=["400"])
    outcomes, report = _failing_session(llm_settings(llm_server, max_retries=2), usage, n=2)
    assert isinstance(outcomes[0], LLMUnavailable) and isinstance(outcomes[1], LLMRequestError)
    assert llm_server.count() == 4
    assert (report["llm_requests"], report["llm_retries"], report["llm_failed_requests"]) == (2, 2, 2)
    assert report["llm_tokens_in"] == 0
    import json
    [entry] = json.loads(usage.read_text())["usage"]  # the usage file is written although nothing was answered
    assert (entry["requests"], entry["retries"], entry["failed"]) == (2, 2, 2)


def test_timeouts_and_interrupted_requests_are_counted(fake_llm, llm_settings, tmp_path):
    with fake_llm.FakeLLM(slow_seconds=3) as srv:
        srv.add("hello", "late", faults=["slow"] * 10)
        _, report = _failing_session(llm_settings(srv, request_timeout=0.2, max_retries=1), tmp_path / "a.json")
        assert srv.count() == 2 and (report["llm_requests"], report["llm_retries"]) == (1, 1)
        assert report["llm_failed_requests"] == 1
        # cancelled while in flight (Ctrl-C): sent, so counted, though never answered
        outcomes, report = _failing_session(llm_settings(srv, request_timeout=30), tmp_path / "b.json",
                                            cancel_after=0.5, n=3)
    assert all(isinstance(o, asyncio.CancelledError) for o in outcomes)
    assert (report["llm_requests"], report["llm_failed_requests"]) == (3, 3)
    assert (tmp_path / "b.json").exists()
