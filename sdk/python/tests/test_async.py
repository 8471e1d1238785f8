"""AsyncClient: the same surface as Client, against the same real server."""

from __future__ import annotations

import uuid

import anyio
import httpx
import pytest
from conftest import BUDGET
from support import FaultProxy, Server, no_keepalive

import ephemeral
from ephemeral import AsyncClient

pytestmark = pytest.mark.anyio


async def test_create_wait_get_list(aclient: AsyncClient, tag: dict[str, str]) -> None:
    run = await aclient.runs.create("echo async", max_cost_micros=BUDGET, metadata=tag,
                                    files={"in.txt": "data"})
    done = await aclient.runs.wait(run.id, timeout=60)
    assert done.succeeded and done.output == "async\n" and done.metadata == tag
    assert (await aclient.runs.get(run.id)).timeline == done.timeline
    newer = [(await aclient.runs.create("true", max_cost_micros=BUDGET)).id for _ in range(2)]
    page = await aclient.runs.list(limit=1)
    assert page.data[0].id == newer[-1] and page.has_more
    ids = []
    async for r in aclient.runs.iter(page_size=1):
        ids.append(r.id)
        if len(ids) == 3:
            break
    assert ids == [*newer[::-1], run.id]
    for run_id in newer:
        await aclient.runs.wait(run_id, timeout=60)
    assert (await aclient.health())["status"] == "ok"
    assert (await aclient.runtime())["network"] is False


async def test_stream_and_events(aclient: AsyncClient) -> None:
    events = await aclient.runs.create("echo a\necho b", max_cost_micros=BUDGET, stream=True)
    async with events:
        seen = [e async for e in events]
    assert [e.id for e in seen] == list(range(1, len(seen) + 1))
    assert seen[-1].type == "worker.destroyed"
    replay = [e async for e in aclient.runs.events(events.id, after=2)]
    assert [e.id for e in replay] == [e.id for e in seen[2:]]


async def test_cancel_and_wait_timeout(aclient: AsyncClient) -> None:
    run = await aclient.runs.create("sleep 60", max_cost_micros=BUDGET)
    with pytest.raises(ephemeral.TimeoutError):
        await aclient.runs.wait(run.id, timeout=0.5)
    await aclient.runs.cancel(run.id)
    assert (await aclient.runs.wait(run.id, timeout=30)).status == "cancelled"
    with pytest.raises(ephemeral.RunFinished):
        await aclient.runs.cancel(run.id)


async def test_typed_errors(aclient: AsyncClient, server: Server) -> None:
    with pytest.raises(ephemeral.NotFound):
        await aclient.runs.get("run_" + "f" * 32)
    with pytest.raises(ephemeral.InvalidRequest) as info:
        await aclient.runs.create("x", max_cost_micros=BUDGET, extra_body={"nope": True})
    assert info.value.field == "nope"
    async with AsyncClient(server.url, server.poor_key) as poor:
        with pytest.raises(ephemeral.InsufficientFunds):
            await poor.runs.create("x", max_cost_micros=50_000)
    async with AsyncClient(server.url, "eph_" + uuid.uuid4().hex) as bad:
        with pytest.raises(ephemeral.Unauthorized):
            await bad.runs.list()


async def test_concurrent_runs(aclient: AsyncClient) -> None:
    results: list[str] = []

    async def one(n: int) -> None:
        run = await aclient.runs.create(f"echo {n}", max_cost_micros=BUDGET)
        results.append((await aclient.runs.wait(run.id, timeout=60)).output or "")

    async with anyio.create_task_group() as tg:
        for n in range(4):
            tg.start_soon(one, n)
    assert sorted(results) == [f"{n}\n" for n in range(4)]


async def test_a_lost_answer_and_a_cut_stream(server: Server, proxy: FaultProxy,
                                             aclient: AsyncClient, tag: dict[str, str]) -> None:
    proxy.drop_response()
    http = httpx.AsyncClient(limits=no_keepalive(), timeout=30)
    async with AsyncClient(proxy.url, server.key, http_client=http) as through_proxy, http:
        run = await through_proxy.runs.create("echo x", max_cost_micros=BUDGET, metadata=tag)
        proxy.cut_response_after(800)
        events = await through_proxy.runs.create("echo y\necho z", max_cost_micros=BUDGET, stream=True)
        seen = [e.id async for e in events]
    assert [c.fault[0] for c in proxy.connections][:4] == ["drop", "pass", "cut", "pass"]
    keys = proxy.header_values("Idempotency-Key")
    assert keys[0] == keys[1]
    assert seen == list(range(1, len(seen) + 1))
    tagged = [r.id async for r in aclient.runs.iter(page_size=100) if r.metadata == tag]
    assert tagged == [run.id]
