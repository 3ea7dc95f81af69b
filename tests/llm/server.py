"""An OpenAI-compatible test server on loopback, for tests and benchmarks of the LLM layer.

It answers ``POST /v1/chat/completions`` and ``POST /v1/completions`` with scripted replies chosen from
the prompt, and can inject latency, ``429`` with ``Retry-After``, ``500`` errors, malformed JSON, dropped
connections, slow answers (timeouts), answers echoing the request's headers, as some proxies do
(``echo``: a 200 with a plain-text body; ``echo-400``: a 400 whose JSON error message holds them), and a
gateway's long HTML error page (``html-502``: a 502 of some 300 kB). Every
request is logged, so a test can assert exactly what was asked and how often.

A reply is a string (the answer's content, ``finish_reason`` ``"stop"``) or a :class:`Shaped` answer, which
also sets ``finish_reason`` and a reasoning model's thinking in the field where servers put it (vLLM and
llama.cpp: ``reasoning_content``; Ollama: ``reasoning``), or no content at all; :func:`cut_at_max_tokens`
makes a reply behave like a model that stops at the request's ``max_tokens`` (one word per token).
Answers name the request's model, or ``served_model`` when it is set (llama.cpp's server names its model
file's path, whatever the request says).

Use it in a test::

    from server import FakeLLM            # tests/llm/conftest.py also offers the ``llm_server`` fixture

    with FakeLLM(latency=0.01) as srv:    # starts on 127.0.0.1, a free port, in a background thread
        srv.add("Target sentiment: negative", "<revised>A dull film.</revised>")
        srv.add("flaky", "fine", faults=["429", "500", "drop", "malformed"])   # then "fine"
        ... point the client at srv.base_url ...
        assert srv.count("flaky") == 5

or as a process (benchmarks)::

    python tests/llm/server.py --latency 0.1      # prints "READY <base_url>" once listening

``GET /stats`` returns ``{"requests": n, "max_concurrent": m}``; ``POST /reset`` zeroes them.
The module depends on aiohttp only, so it can be copied or loaded by path from any test directory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

#: Faults a rule (or :meth:`FakeLLM.fail_next`) can inject, in the order listed.
FAULTS = ("429", "500", "503", "400", "404", "malformed", "drop", "slow", "empty", "echo", "echo-400", "html-502")



@dataclass
class Shaped:
    """A scripted answer with more than its text: ``content`` (None: the message has ``"content": null``, as
    vLLM's reasoning parser sends when the model never finished thinking), ``finish_reason``, ``reasoning``
    sent beside the content in ``reasoning_field`` (None: no such field), the ``completion_tokens``
    reported in usage (None: the words of content and reasoning), and a ``refusal`` sent in the message's
    ``refusal`` field, as OpenAI sends a model's refusal (None: no such field)."""

    content: str | None
    finish_reason: str = "stop"
    reasoning: str | None = None
    reasoning_field: str = "reasoning_content"
    completion_tokens: int | None = None
    refusal: str | None = None


Reply = str | Shaped | Callable[[dict[str, Any], str], "str | Shaped"]


def cut_at_max_tokens(reply: Reply) -> Callable[[dict[str, Any], str], Shaped]:
    """A reply that behaves like a model meeting the request's ``max_tokens`` (one whitespace-separated
    word per token): reasoning first, then content, both cut where the budget runs out, and
    ``finish_reason`` ``"length"`` when anything was cut. A string reply counts as content; inline
    ``<think>`` blocks in it are cut like any other words."""

    def answer(body: dict[str, Any], prompt: str) -> Shaped:
        shaped = reply(body, prompt) if callable(reply) else reply
        if isinstance(shaped, str):
            shaped = Shaped(shaped)
        budget = body.get("max_tokens") or body.get("max_completion_tokens")
        if budget is None:
            return shaped
        reasoning_words = (shaped.reasoning or "").split()
        content_words = (shaped.content or "").split()
        if len(reasoning_words) + len(content_words) <= budget:
            return shaped
        kept_reasoning = reasoning_words[:budget]
        kept_content = content_words[:max(0, budget - len(kept_reasoning))]
        content = " ".join(kept_content) if kept_content else (None if shaped.reasoning is not None else "")
        return Shaped(content, "length",
                      " ".join(kept_reasoning) if shaped.reasoning is not None else None, shaped.reasoning_field,
                      completion_tokens=budget)

    return answer


@dataclass
class Rule:
    """Answer requests whose prompt matches ``match`` (substring, or a compiled regex, or a predicate).

    ``faults`` are consumed one per matching request before the reply is given; ``latency`` overrides the
    server's latency for matching requests; ``times`` limits how often the rule applies (None = always).
    """

    match: str | re.Pattern[str] | Callable[[str], bool]
    reply: Reply
    faults: list[str] = field(default_factory=list)
    latency: float | None = None
    times: int | None = None
    hits: int = 0

    def matches(self, prompt: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if isinstance(self.match, str):
            return self.match in prompt
        if isinstance(self.match, re.Pattern):
            return self.match.search(prompt) is not None
        return bool(self.match(prompt))


@dataclass
class LoggedRequest:
    path: str
    body: dict[str, Any]
    prompt: str
    headers: dict[str, str]
    time: float
    outcome: str = ""


def prompt_text(body: dict[str, Any]) -> str:
    """The text a rule is matched against: all message contents joined by newlines, or the prompt."""
    if "messages" in body:
        return "\n".join(str(m.get("content") or "") for m in body["messages"])
    prompt = body.get("prompt", "")
    return "\n".join(prompt) if isinstance(prompt, list) else str(prompt)


class FakeLLM:
    """The server. Thread-safe enough for tests: rules are added before or between requests."""

    def __init__(self, latency: float = 0.0, default_reply: Reply = "OK", retry_after: str | None = "1",
                 api_key: str | None = None, slow_seconds: float = 30.0, host: str = "127.0.0.1",
                 port: int = 0, log_requests: bool = True, served_model: str | None = None) -> None:
        self.latency = latency
        self.served_model = served_model
        self.default_reply = default_reply
        self.retry_after = retry_after
        self.api_key = api_key
        self.slow_seconds = slow_seconds
        self.host = host
        self.port = port
        self.log_requests = log_requests
        self.rules: list[Rule] = []
        self.requests: list[LoggedRequest] = []
        self.n_requests = 0
        self.in_flight = 0
        self.max_concurrent = 0
        self._global_faults: list[str] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -----------------------------------------------------------------------------------
    def add(self, match: str | re.Pattern[str] | Callable[[str], bool], reply: Reply,
            faults: list[str] | tuple[str, ...] = (), latency: float | None = None,
            times: int | None = None) -> Rule:
        """Add a rule; the first matching rule answers. Returns it (``rule.hits`` counts its uses)."""
        for f in faults:
            if f not in FAULTS:
                raise ValueError(f"unknown fault {f!r}; choose from {FAULTS}")
        rule = Rule(match, reply, list(faults), latency, times)
        with self._lock:
            self.rules.append(rule)
        return rule

    def fail_next(self, *faults: str) -> None:
        """Inject these faults into the next requests, whatever their prompt."""
        with self._lock:
            self._global_faults.extend(faults)

    def count(self, text: str | None = None) -> int:
        """Requests received (whose prompt contains ``text``, when given), faults included."""
        if text is None:
            return self.n_requests
        return sum(1 for r in self.requests if text in r.prompt)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- serving -------------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/v1/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/stats", self._stats)
        app.router.add_post("/reset", self._reset)
        return app

    async def start_async(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=1024)
        await site.start()
        sock = site._server.sockets[0]  # type: ignore[union-attr]
        self.port = sock.getsockname()[1]

    def start(self) -> FakeLLM:
        """Serve from a background thread; returns once listening."""
        ready = threading.Event()
        errors: list[BaseException] = []

        def serve() -> None:
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self.start_async())
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._runner.cleanup())  # type: ignore[union-attr]
            self._loop.close()

        self._thread = threading.Thread(target=serve, name="fake-llm", daemon=True)
        self._thread.start()
        ready.wait(30)
        if errors:
            raise errors[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- handlers ------------------------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response({"requests": self.n_requests, "max_concurrent": self.max_concurrent})

    async def _reset(self, request: web.Request) -> web.Response:
        with self._lock:
            self.n_requests = 0
            self.max_concurrent = 0
            self.requests.clear()
        return web.json_response({"ok": True})

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = json.loads(await request.read())
        prompt = prompt_text(body)
        with self._lock:
            self.n_requests += 1
            self.in_flight += 1
            self.max_concurrent = max(self.max_concurrent, self.in_flight)
            rule = next((r for r in self.rules if r.matches(prompt)), None)
            if self._global_faults:
                fault = self._global_faults.pop(0)
            elif rule is not None and rule.faults:
                fault = rule.faults.pop(0)
            else:
                fault = ""
                if rule is not None:
                    rule.hits += 1
            entry = LoggedRequest(request.path, body, prompt, dict(request.headers), time.monotonic(), fault or "ok")
            if self.log_requests:
                self.requests.append(entry)
        try:
            if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
                entry.outcome = "401"
                got = request.headers.get("Authorization", "")
                return web.json_response(
                    {"error": {"message": f"Incorrect API key provided: {got[7:]}", "type": "invalid_request_error"}},
                    status=401)
            latency = rule.latency if rule is not None and rule.latency is not None else self.latency
            if latency:
                await asyncio.sleep(latency)
            if fault:
                return await self._fault(request, fault)
            reply = self.default_reply if rule is None else rule.reply
            answer = reply(body, prompt) if callable(reply) else reply
            payload = self._payload(body, prompt, answer)
            if self.served_model is not None:
                payload["model"] = self.served_model
            return web.Response(body=json.dumps(payload).encode(),
                                content_type="application/json")
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _fault(self, request: web.Request, fault: str) -> web.StreamResponse:
        if fault == "429":
            headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            return web.json_response({"error": {"message": "Rate limit reached", "type": "rate_limit"}},
                                     status=429, headers=headers)
        if fault in ("500", "503"):
            return web.json_response({"error": {"message": "internal error"}}, status=int(fault))
        if fault == "400":
            return web.json_response({"error": {"message": "prompt too long for the context"}}, status=400)
        if fault == "404":
            return web.json_response({"error": {"message": "The model does not exist."}}, status=404)
        if fault == "malformed":
            return web.Response(body=b'{"id": "x", "choices": [{"message": {"content": "cut', content_type="application/json")
        if fault == "empty":
            return web.Response(body=b"", content_type="application/json")
        if fault in ("echo", "echo-400"):
            # a proxy that answers with the request it received, headers included
            seen = f"{request.method} {request.path_qs} HTTP/1.1\n" + "\n".join(
                f"{k}: {v}" for k, v in request.headers.items())
            if fault == "echo":
                return web.Response(status=200, text=seen, content_type="text/plain")
            return web.json_response({"error": {"message": f"bad request:\n{seen}"}}, status=400)
        if fault == "html-502":
            page = "<html><body><h1>502 Bad Gateway</h1>" + "<p>upstream trouble</p>\n" * 12000 + "</body></html>"
            return web.Response(status=502, text=page, content_type="text/html")
        if fault == "slow":
            await asyncio.sleep(self.slow_seconds)
            return web.json_response({"error": {"message": "too late"}}, status=500)
        # "drop": close the connection without answering
        assert request.transport is not None
        request.transport.close()
        return web.Response(status=204)

    @staticmethod
    def _payload(body: dict[str, Any], prompt: str, answer: str | Shaped) -> dict[str, Any]:
        shaped = answer if isinstance(answer, Shaped) else Shaped(answer)
        text = shaped.content
        words = sum(len((part or "").split()) for part in (text, shaped.reasoning, shaped.refusal))
        usage = {"prompt_tokens": len(prompt.split()),
                 "completion_tokens": words if shaped.completion_tokens is None else shaped.completion_tokens}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if "messages" in body:
            message: dict[str, Any] = {"role": "assistant", "content": text}
            if shaped.reasoning is not None:
                message[shaped.reasoning_field] = shaped.reasoning
            if shaped.refusal is not None:
                message["refusal"] = shaped.refusal
            choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": shaped.finish_reason}
            obj = "chat.completion"
        else:
            choice = {"index": 0, "text": text or "", "finish_reason": shaped.finish_reason}
            obj = "text_completion"
        return {"id": "cmpl-test", "object": obj, "created": 0, "model": body.get("model", ""),
                "choices": [choice], "usage": usage}


def echo_reply(body: dict[str, Any], prompt: str) -> str:
    """A reply callable: the last message (or prompt) wrapped in ``<revised>`` tags."""
    last = body["messages"][-1]["content"] if "messages" in body else prompt
    return f"<revised>{last}</revised>"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--reply", default="OK", help="the answer to every request")
    args = ap.parse_args(argv)
    srv = FakeLLM(latency=args.latency, default_reply=args.reply, port=args.port, log_requests=False)

    async def serve() -> None:
        await srv.start_async()
        print(f"READY {srv.base_url}", flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
