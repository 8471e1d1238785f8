"""Problems from a real server become typed exceptions."""

from __future__ import annotations

import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BUDGET
from support import Server, remove_tree, start_server

import ephemeral
from ephemeral import Client

MISSING_RUN = "run_" + "0" * 32


def count_tagged(client: Client, tag: dict[str, str]) -> int:
    return sum(1 for run in client.runs.iter(page_size=100) if run.metadata == tag)


def test_a_bad_key_is_unauthorized_and_never_echoed(server: Server) -> None:
    bad = "eph_" + uuid.uuid4().hex
    with Client(server.url, bad) as c, pytest.raises(ephemeral.Unauthorized) as info:
        c.runs.list()
    error = info.value
    assert error.status == 401 and error.type == "/problems/unauthorized"
    assert bad not in str(error) and bad not in repr(error)


def test_a_budget_above_the_balance_is_402(server: Server) -> None:
    with Client(server.url, server.poor_key) as c, pytest.raises(ephemeral.InsufficientFunds) as info:
        c.runs.create("echo", max_cost_micros=50_000)
    assert info.value.status == 402 and info.value.slug == "insufficient-funds"
    assert "50000" in info.value.detail


def test_an_unknown_field_is_a_400_naming_it(client: Client) -> None:
    with pytest.raises(ephemeral.InvalidRequest) as info:
        client.runs.create("echo", max_cost_micros=BUDGET, extra_body={"bogus": 1})
    assert info.value.status == 400 and info.value.field == "bogus"


@pytest.mark.parametrize("kwargs,field", [
    ({"prompt": "", "max_cost_micros": BUDGET}, "prompt"),
    ({"prompt": "x", "max_cost_micros": 10**12}, "max_cost_micros"),
    ({"prompt": "x", "max_cost_micros": BUDGET, "timeout_seconds": 0}, "timeout_seconds"),
    ({"prompt": "x", "max_cost_micros": BUDGET, "model": "no/such-model"}, "model"),
])
def test_a_bad_value_names_its_field(client: Client, kwargs: dict[str, object], field: str) -> None:
    # docs/api-shapes.md says 400 validation-failed; today's server answers 422.
    with pytest.raises(ephemeral.InvalidRequest) as info:
        client.runs.create(**kwargs)  # type: ignore[call-overload]
    assert info.value.status in (400, 422) and info.value.field == field


def test_missing_runs_are_404(client: Client, server: Server) -> None:
    for call in (lambda: client.runs.get(MISSING_RUN), lambda: client.runs.get("not-an-id"),
                 lambda: client.runs.cancel(MISSING_RUN), lambda: next(client.runs.events(MISSING_RUN))):
        with pytest.raises(ephemeral.NotFound) as info:
            call()
        assert info.value.status == 404
    mine = client.runs.create("echo mine", max_cost_micros=BUDGET)
    with Client(server.url, server.other_key) as other, pytest.raises(ephemeral.NotFound):
        other.runs.get(mine.id)
    client.runs.wait(mine.id, timeout=60)


def test_cancelling_a_finished_run_is_409(client: Client) -> None:
    run = client.runs.wait(client.runs.create("true", max_cost_micros=BUDGET).id, timeout=60)
    with pytest.raises(ephemeral.Conflict) as info:
        client.runs.cancel(run.id)
    assert info.value.status == 409 and isinstance(info.value, ephemeral.RunFinished)


def test_an_idempotency_key_replays_and_refuses_another_body(client: Client, tag: dict[str, str]) -> None:
    key = f"sdk-test-{uuid.uuid4()}"
    first = client.runs.create("echo once", max_cost_micros=BUDGET, metadata=tag, idempotency_key=key)
    again = client.runs.create("echo once", max_cost_micros=BUDGET, metadata=tag, idempotency_key=key)
    assert again.id == first.id
    with pytest.raises(ephemeral.IdempotencyKeyReused) as info:
        client.runs.create("echo other", max_cost_micros=BUDGET, metadata=tag, idempotency_key=key)
    assert info.value.status == 422
    client.runs.wait(first.id, timeout=60)
    assert count_tagged(client, tag) == 1


def test_a_body_over_a_mebibyte_is_413(client: Client) -> None:
    with pytest.raises(ephemeral.PayloadTooLarge) as info:
        client.runs.create("echo", max_cost_micros=BUDGET, extra_body={"pad": "x" * (1 << 20)})
    assert info.value.status == 413


@pytest.fixture
def spare_server(tmp_path: Path) -> Iterator[Server]:
    """A server of its own, with two runs a minute: tests here exhaust or stop it."""
    srv = start_server(tmp_path / "spare", "[limits]\nruns_per_minute = 2\n")
    try:
        yield srv
    finally:
        srv.stop()
        remove_tree(tmp_path / "spare")


def test_rate_limits_and_shutdown_carry_retry_after(spare_server: Server) -> None:
    with Client(spare_server.url, spare_server.key, max_retries=0) as c:
        long = c.runs.create("sleep 30", max_cost_micros=BUDGET)
        c.runs.create("true", max_cost_micros=BUDGET)
        with pytest.raises(ephemeral.RateLimited) as limited:
            c.runs.create("true", max_cost_micros=BUDGET)
        assert limited.value.status == 429
        assert limited.value.retry_after is not None and limited.value.retry_after >= 1

        spare_server.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
        while not c.health().get("draining") and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(ephemeral.ShuttingDown) as stopping:
            c.runs.create("true", max_cost_micros=BUDGET)
        assert stopping.value.status == 503 and isinstance(stopping.value, ephemeral.ServerError)
        assert stopping.value.retry_after is not None
        assert c.runs.get(long.id).id == long.id
