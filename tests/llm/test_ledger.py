"""Usage ledger, price tables and the budget guard."""

from __future__ import annotations

import asyncio

import pytest

from cfaug.llm import BudgetExceeded, Completion, LLMConfigError, PriceTable, Request, UsageLedger, create_client
from cfaug.llm.ledger import BudgetGuard, Price


def test_price_table_defaults_overrides_and_patterns(tmp_path):
    table = PriceTable.load(None)
    assert table.get("gpt-4o-mini") == Price(0.15, 0.60)
    assert table.get("no-such-model") is None
    f = tmp_path / "prices.yaml"
    f.write_text("gpt-4o-mini: {input: 1, output: 2}\n'local/*': {input: 0.5, output: 0.25}\n")
    table = PriceTable.load(str(f))
    assert table.get("gpt-4o-mini") == Price(1.0, 2.0)
    assert table.get("local/llama-3-8b") == Price(0.5, 0.25)
    assert table.get("gpt-4o") is not None  # built-ins are kept
    assert str(f) in table.source


@pytest.mark.parametrize("content, problem", [
    ("gpt: {input: 1}", "needs 'input' and 'output'"),
    ("gpt: {input: one, output: 2}", "non-numeric"),
    ("gpt: {input: -1, output: 2}", "negative"),
    ("[1, 2]", "expected a mapping"),
])
def test_bad_price_tables_are_explained(tmp_path, content, problem):
    f = tmp_path / "p.yaml"
    f.write_text(content)
    with pytest.raises(LLMConfigError, match=problem):
        PriceTable.load(str(f))


def test_ledger_counts_by_purpose_and_costs():
    ledger = UsageLedger("m", PriceTable({"m": {"input": 1.0, "output": 2.0}}))
    ledger.record(Completion("a", tokens_in=1000, tokens_out=500, attempts=3), "zero-shot.v1", "generate")
    ledger.record(Completion("b", tokens_in=200, tokens_out=10), "zero-shot.v1", "judge")
    ledger.record(Completion("a", tokens_in=1000, tokens_out=500, cached=True), "zero-shot.v1", "generate")
    report = ledger.report()
    assert report["llm_requests"] == 2 and report["llm_retries"] == 2 and report["llm_cache_hits"] == 1
    assert (report["llm_tokens_in"], report["llm_tokens_out"]) == (1200, 510)
    assert report["llm_cost_usd"] == pytest.approx((1200 * 1.0 + 510 * 2.0) / 1e6)
    assert report["llm_cache_saved_usd"] == pytest.approx((1000 + 1000) / 1e6)
    assert set(report["llm_usage"]) == {"zero-shot.v1/generate", "zero-shot.v1/judge"}


def test_unknown_price_is_reported_as_unknown_not_zero():
    ledger = UsageLedger("mystery")
    ledger.record(Completion("a", tokens_in=10, tokens_out=10), "t", "generate")
    assert "unknown" in ledger.report()["llm_cost_usd"]


def test_worst_case_cost_bounds_the_real_cost():
    ledger = UsageLedger("m", PriceTable({"m": {"input": 1.0, "output": 1.0}}))
    req = Request(messages=({"role": "user", "content": "x" * 400},), params={"max_tokens": 100})
    assert ledger.worst_case_cost(req, 512) >= (400 + 100) / 1e6


def test_budget_guard_waits_for_settlement_then_stops():
    async def go():
        guard = BudgetGuard(limit=1.0)
        await guard.reserve(0.6)          # in flight
        waiter = asyncio.ensure_future(guard.reserve(0.6))  # does not fit while the first is in flight
        await asyncio.sleep(0.01)
        assert not waiter.done()
        await guard.settle(0.6, 0.3)      # the first cost less than reserved: the second now fits
        await waiter
        await guard.settle(0.6, 0.6)      # spent 0.9
        with pytest.raises(BudgetExceeded, match="budget of 1 USD reached"):
            await guard.reserve(0.2)
        with pytest.raises(BudgetExceeded):  # and it stays exhausted
            await guard.reserve(0.0)
        return guard.spent
    assert asyncio.run(go()) == pytest.approx(0.9)


def test_client_stops_before_the_budget_is_exceeded(llm_server, llm_settings, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("test-model: {input: 1000, output: 1000}\n")  # USD per 1M tokens: 0.001 per token
    llm_server.add("question", "a b c d e")  # 5 tokens out; each prompt is 2 tokens

    async def go():
        client = create_client(llm_settings(llm_server, max_budget=0.05, price_table=str(prices), concurrency=4))
        answered = 0
        try:
            for i in range(100):
                await client.chat([{"role": "user", "content": f"question {i}"}], max_tokens=5)
                answered += 1
        except BudgetExceeded:
            pass
        finally:
            await client.aclose()
            client.close()
        return answered, client.ledger.spent

    answered, spent = asyncio.run(go())
    assert 0 < answered < 100
    assert spent <= 0.05
    assert spent == pytest.approx(answered * 7 * 0.001)
    assert llm_server.count() == answered  # the request that could overspend was never sent


def test_budget_without_a_price_is_refused(llm_server, llm_settings):
    with pytest.raises(LLMConfigError, match="needs a price for model 'test-model'"):
        create_client(llm_settings(llm_server, max_budget=1.0))
