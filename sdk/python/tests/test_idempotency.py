"""Lost answers and broken streams, made real by a proxy between client and server."""

from __future__ import annotations

import pytest
from conftest import BUDGET
from support import FaultProxy, Server

import ephemeral
from ephemeral import Client

PROMPT = "echo one\necho two\necho three"


def tagged_runs(client: Client, tag: dict[str, str]) -> list[str]:
    return [run.id for run in client.runs.iter(page_size=100) if run.metadata == tag]


def test_a_create_whose_answer_is_lost_makes_exactly_one_run(
        server: Server, proxy: FaultProxy, client: Client, tag: dict[str, str]) -> None:
    proxy.drop_response()
    with Client(proxy.url, server.key, max_retries=2, timeout=30) as through_proxy:
        run = through_proxy.runs.create(PROMPT, max_cost_micros=BUDGET, metadata=tag)
    keys = proxy.header_values("Idempotency-Key")
    assert len(keys) == 2 and keys[0] == keys[1], "the retry reused the first attempt's key"
    assert tagged_runs(client, tag) == [run.id]
    assert client.runs.wait(run.id, timeout=60).succeeded


def test_without_retries_the_lost_answer_is_a_connection_error(
        server: Server, proxy: FaultProxy, client: Client, tag: dict[str, str]) -> None:
    proxy.drop_response()
    with Client(proxy.url, server.key, max_retries=0, timeout=30) as through_proxy, \
            pytest.raises(ephemeral.ConnectionError):
        through_proxy.runs.create(PROMPT, max_cost_micros=BUDGET, metadata=tag)
    (run_id,) = tagged_runs(client, tag)  # the server did make it, once
    client.runs.wait(run_id, timeout=60)


def assert_whole_timeline(events: list[ephemeral.Event]) -> None:
    assert [e.id for e in events] == list(range(1, len(events) + 1)), "no gap, no duplicate"
    assert events[0].type == "budget.reserved" and events[-1].type == "worker.destroyed"


@pytest.mark.parametrize("cut", [300, 700, 1200])
def test_a_stream_cut_mid_event_resumes_with_last_event_id(
        server: Server, proxy: FaultProxy, client: Client, cut: int) -> None:
    proxy.cut_response_after(cut)
    with Client(proxy.url, server.key, timeout=30) as through_proxy, \
            through_proxy.runs.create(PROMPT, max_cost_micros=BUDGET, stream=True) as events:
        seen = list(events)
    assert_whole_timeline(seen)
    assert [e.data["data"] for e in seen if e.type == "shell.output"] == ["one\n", "two\n", "three\n"]
    assert len(proxy.connections) >= 2
    assert any("GET /v1/runs/" in text for text in proxy.requests_text())
    if cut > 600:  # past the headers and the first event: resumed after it
        resumed = proxy.header_values("Last-Event-ID")
        assert resumed and all(int(v) >= 1 for v in resumed)
    assert client.runs.get(events.id).succeeded


def test_reading_events_survives_repeated_cuts(server: Server, proxy: FaultProxy, client: Client) -> None:
    run = client.runs.wait(client.runs.create(PROMPT, max_cost_micros=BUDGET).id, timeout=60)
    proxy.cut_response_after(400, times=3)
    with Client(proxy.url, server.key, timeout=30) as through_proxy:
        seen = list(through_proxy.runs.events(run.id))
    assert_whole_timeline(seen)
    assert run.timeline is not None and len(seen) == len(run.timeline)
    assert len(proxy.header_values("Last-Event-ID")) == 3
