"""Fixtures for the prompting strategies: the loopback test server (tests/llm/server.py), an isolated
request cache, a runner helper and a scripted model that tells the strategies' prompts apart."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).with_name("fixtures")


from cfaug_tests_llm_server import FakeLLM  # noqa: E402  (loaded by tests/conftest.py)

#: Phrases that tell the prompts apart (each appears in one kind of built-in prompt only).
KINDS = {
    "judge": ("Classify the next", "Rate the next text", "Count the next text"),
    "compare": ("Revised text 1:", "Revised premise 1:", "Revised hypothesis 1:"),
    "opro": ("Earlier revised",),
    "feedback": ("Give your feedback",),
    "refine": ("Using the feedback",),
    "cot": ("step by step",),
    "few-shot": ("in the same way as the examples", "Following the example, complete the next one."),
}


def kind_of(prompt: str) -> str:
    for kind, marks in KINDS.items():
        if any(m in prompt for m in marks):
            return kind
    return "other"


class Script:
    """A scripted model: answers each kind of prompt from its own queue (the last answer repeats), or by
    a function of the prompt. ``asked[kind]`` keeps the prompts in order, ``order`` the kinds."""

    def __init__(self, **answers: list[str] | Callable[[str], str]) -> None:
        self.answers = answers
        self.asked: dict[str, list[str]] = {}
        self.counts: dict[str, int] = {}
        self.order: list[str] = []

    def __call__(self, body: dict[str, Any], prompt: str) -> str:
        kind = kind_of(prompt)
        self.asked.setdefault(kind, []).append(prompt)
        self.order.append(kind)
        source = self.answers.get(kind)
        if source is None:
            raise AssertionError(f"unexpected {kind} prompt:\n{prompt}")
        if callable(source):
            return source(prompt)
        n = self.counts.get(kind, 0)
        self.counts[kind] = n + 1
        return source[min(n, len(source) - 1)]

    @staticmethod
    def quoted(prompt: str, field: str = "Text") -> str:
        """The text a judge prompt asks about (its last ``Text: "..."`` line, or ``Premise``...)."""
        return re.findall(rf'^{field}: "(.*)"$', prompt, re.M)[-1]

    @staticmethod
    def labels_by_words(words: tuple[str, ...], yes: str, no: str) -> Callable[[str], str]:
        """A judge answering ``yes`` when the judged text holds one of ``words``, else ``no``."""
        def judge(prompt: str) -> str:
            text = Script.quoted(prompt).lower()
            return yes if any(w in text for w in words) else no
        return judge


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CFAUG_CACHE_DIR", str(tmp_path / "llm-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CFAUG_LLM_BASE_URL", "CFAUG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def scripted() -> type[Script]:
    """The :class:`Script` class: ``scripted(judge=[...], compare=[...], **{"few-shot": [...]})``."""
    return Script


@pytest.fixture
def serve():
    """Start test servers answering with a reply function (``serve(reply, **FakeLLM options)``)."""
    servers = []

    def start(reply: Any, **options: Any):
        srv = FakeLLM(default_reply=reply, **options).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.stop()


@pytest.fixture
def fixtures() -> Path:
    """tests/methods/compare_generate/fixtures (see its SOURCE.md)."""
    return FIXTURES


@pytest.fixture
def run_method(tmp_path: Path):
    """Run a method through the runner against a server, with a fresh request cache; returns (summary,
    output rows, results lines)."""
    from cfaug.api import run_augment

    counter = iter(range(10_000))

    def run(method: str, data: list[dict[str, Any]], srv: Any, *, task: str = "sentiment", keep_failed: bool = True,
            edit_side: str = "premise", preset: str | None = None, **params: Any):
        run_dir = tmp_path / f"run-{next(counter)}"
        llm = {"base_url": srv.base_url, "model": "test-model", "retry_base_delay": 0.01, "retry_max_delay": 0.05,
               "request_timeout": 10, "cache_dir": str(run_dir) + ".cache"}
        params.setdefault("parse_retries", 0)
        params.setdefault("flip_check", "none")  # scripted answers: no classifier flip check
        summary, rows = run_augment(data, method, task=task, edit_side=edit_side, run_dir=run_dir, progress=False,
                                    keep_failed=keep_failed, preset=preset, params={"llm": llm, **params})
        lines = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines() if x.strip()]
        return summary, rows, lines

    return run
