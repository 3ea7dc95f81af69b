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
