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


def _budget_session(srv, llm_settings, prices, usage_file, first, n, budget=0.1):
    """One client session on ``usage_file``: asks up to ``n`` questions; (answered, stopped, report)."""
    async def go():
        client = create_client(llm_settings(srv, max_budget=budget, price_table=str(prices), concurrency=1),
                               usage_file=usage_file)
        answered, stopped = 0, None
        try:
            for i in range(first, first + n):
                await client.chat([{"role": "user", "content": f"question {i:03d}"}], max_tokens=5)
                answered += 1
        except BudgetExceeded as exc:
            stopped = str(exc)
        finally:
            await client.aclose()
            client.close()
        return answered, stopped, client.report()
    return asyncio.run(go())


def test_spending_and_budget_add_up_over_sessions_of_one_run(llm_server, llm_settings, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("test-model: {input: 1000, output: 1000}\n")  # 0.001 USD per token
    llm_server.add("question", "a b c d e")  # each answer: 2 tokens in + 5 out = 0.007 USD
    # worst case per request: 12 prompt bytes + 16 formatting + 5 out = 0.033, so 10 answers fit in 0.1
    usage = tmp_path / "run" / "llm_usage.json"
    a1, stopped, r1 = _budget_session(llm_server, llm_settings, prices, usage, 0, 3)
    assert (a1, stopped) == (3, None) and r1["llm_requests"] == 3
    assert r1["llm_cost_usd"] == pytest.approx(0.021)
    a2, stopped, r2 = _budget_session(llm_server, llm_settings, prices, usage, 100, 100)
    assert stopped and a1 + a2 == 10  # the second session knew of the first one's spending
    assert r2["llm_requests"] == 10 and r2["llm_sessions"] == 2
    assert r2["llm_cost_usd"] == pytest.approx(0.07) and r2["llm_cost_usd"] <= 0.1
    a3, stopped, r3 = _budget_session(llm_server, llm_settings, prices, usage, 200, 100)
    assert a3 == 0 and "budget of 0.1 USD reached" in stopped and "earlier sessions" in stopped
    assert llm_server.count() == 10
    assert r3["llm_cost_usd"] == pytest.approx(0.07) and r3["llm_sessions"] == 3


def test_without_a_usage_file_each_session_counts_alone(llm_server, llm_settings, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("test-model: {input: 1000, output: 1000}\n")
    llm_server.add("question", "a b c d e")
    for first in (0, 100):
        answered, _, report = _budget_session(llm_server, llm_settings, prices, None, first, 3)
        assert answered == 3 and report["llm_cost_usd"] == pytest.approx(0.021)
        assert "llm_sessions" not in report


def test_a_broken_usage_file_is_named(tmp_path):
    from cfaug.llm.ledger import UsageLedger

    f = tmp_path / "llm_usage.json"
    f.write_text("{not json")
    with pytest.raises(LLMConfigError, match="llm_usage.json"):
        UsageLedger("m", path=f)


def test_read_usage_gives_the_figures_of_a_finished_run(tmp_path):
    from cfaug.llm.ledger import USAGE_FILE, read_usage

    assert read_usage(tmp_path) == {}
    prices = PriceTable({"m": {"input": 1.0, "output": 2.0}})
    for n in (1, 2):
        ledger = UsageLedger("m", prices, path=tmp_path / USAGE_FILE)
        ledger.record(Completion("a", tokens_in=1000, tokens_out=500), "zero-shot.v1", "generate")
        ledger.record_unparsed(f"item-{n}")
        ledger.save()
    figures = read_usage(tmp_path)
    assert figures["llm_requests"] == 2 and figures["llm_tokens_in"] == 2000 and figures["llm_sessions"] == 2
    assert figures["llm_cost_usd"] == pytest.approx(2 * (1000 * 1.0 + 500 * 2.0) / 1e6)
    assert figures["llm_unparsed_items"] == 2 and figures["llm_unparsed_answers"] == 2
    assert "llm_session_requests" not in figures


def test_unparsed_items_are_counted_by_reason_over_sessions(tmp_path):
    path = tmp_path / "llm_usage.json"
    ledger = UsageLedger("m", path=path)
    ledger.record_unparsed("a", "cut off at max_tokens")
    ledger.record_unparsed("b", "cut off at max_tokens")
    ledger.record_unparsed("b", "reasoning block never closed")  # an item's last unreadable question counts
    ledger.record_unparsed(None, "empty answer")
    ledger.save()
    again = UsageLedger("m", path=path)
    assert again.report()["llm_unparsed_reasons"] == {
        "cut off at max_tokens": 1, "empty answer": 1, "reasoning block never closed": 1}
    again.item_started("a")  # --retry-failed runs it again
    report = again.report()
    assert report["llm_unparsed_items"] == 2
    assert report["llm_unparsed_reasons"] == {"empty answer": 1, "reasoning block never closed": 1}
