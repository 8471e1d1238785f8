"""Retry policy, error mapping and stream resumption against scripted answers.

These use httpx.MockTransport to produce failures a real server gives only
rarely (a 503, a Retry-After, a stream that breaks at a chosen byte); the
same behaviours are tested end to end through a proxy in
test_idempotency.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

import ephemeral

URL = "http://ephemeral.test"
KEY = "eph_secret_test_key_0123456789"
RUN = {"id": "run_" + "a" * 32, "object": "run", "status": "queued", "permissions": {},
       "usage": {}, "cost": {}, "metadata": {}}

Handler = Callable[[httpx.Request], httpx.Response]


def problem(status: int, slug: str, headers: dict[str, str] | None = None, **extra: object) -> httpx.Response:
    body = {"type": f"/problems/{slug}", "title": slug.replace("-", " "), "status": status,
            "detail": f"{slug} happened", **extra}
    return httpx.Response(status, json=body, headers={"content-type": "application/problem+json",
                                                      **(headers or {})})


class Script:
    """Answers requests from a list, recording each request and each sleep."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.sleeps: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def client(self, max_retries: int = 2) -> ephemeral.Client:
        c = ephemeral.Client(URL, KEY, max_retries=max_retries,
                             http_client=httpx.Client(transport=httpx.MockTransport(self)))
        c._transport.sleep = self.sleeps.append
        return c

    def async_client(self, max_retries: int = 2) -> ephemeral.AsyncClient:
        async def handler(request: httpx.Request) -> httpx.Response:
            await request.aread()
            return self(request)

        c = ephemeral.AsyncClient(URL, KEY, max_retries=max_retries,
                                  http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))

        async def sleep(seconds: float) -> None:
            self.sleeps.append(seconds)

        c._transport.sleep = sleep
        return c


def created() -> httpx.Response:
    return httpx.Response(201, json=RUN, headers={"location": f"/v1/runs/{RUN['id']}"})


def test_a_create_is_retried_with_one_idempotency_key() -> None:
    script = Script(problem(503, "shutting-down", {"retry-after": "0"}),
                    httpx.ConnectError("refused"), created())
    run = script.client().runs.create("echo hi", max_cost_micros=1000)
    assert run.id == RUN["id"]
    keys = {r.headers["idempotency-key"] for r in script.requests}
    assert len(script.requests) == 3 and len(keys) == 1
    assert len({r.content for r in script.requests}) == 1, "every retry sends the same bytes"
    assert script.sleeps[0] == 0.0


def test_an_explicit_idempotency_key_is_sent_as_given() -> None:
    script = Script(created())
    script.client().runs.create("x", max_cost_micros=1, idempotency_key="my-key-1")
    assert script.requests[0].headers["idempotency-key"] == "my-key-1"


def test_retry_after_is_honoured() -> None:
    script = Script(problem(429, "rate-limited", {"retry-after": "3"}), created())
    script.client().runs.create("x", max_cost_micros=1)
    assert script.sleeps == [3.0]


def test_a_retry_after_too_long_is_returned_not_slept() -> None:
    script = Script(problem(429, "too-many-runs", {"retry-after": "120"}))
    with pytest.raises(ephemeral.RateLimited) as info:
        script.client().runs.create("x", max_cost_micros=1)
    assert info.value.retry_after == 120 and script.sleeps == []


def test_backoff_grows_and_max_retries_bounds_the_attempts() -> None:
    script = Script(*[problem(500, "internal")] * 4)
    with pytest.raises(ephemeral.ServerError) as info:
        script.client(max_retries=3).runs.get(RUN["id"])
    assert len(script.requests) == 4 and info.value.attempts == 4
    assert 0.375 <= script.sleeps[0] <= 0.625 and 0.75 <= script.sleeps[1] <= 1.25
    assert 1.5 <= script.sleeps[2] <= 2.5


def test_max_retries_zero_sends_once() -> None:
    script = Script(problem(503, "shutting-down", {"retry-after": "1"}))
    with pytest.raises(ephemeral.ShuttingDown) as info:
        script.client(max_retries=0).runs.list()
    assert len(script.requests) == 1 and info.value.retry_after == 1


@pytest.mark.parametrize("status,slug,cls", [
    (400, "invalid-request", ephemeral.InvalidRequest),
    (401, "unauthorized", ephemeral.Unauthorized),
    (402, "insufficient-funds", ephemeral.InsufficientFunds),
    (404, "not-found", ephemeral.NotFound),
    (409, "run-finished", ephemeral.RunFinished),
    (409, "sandbox-ended", ephemeral.SandboxEnded),
    (413, "payload-too-large", ephemeral.PayloadTooLarge),
    (422, "idempotency-key-reused", ephemeral.IdempotencyKeyReused),
    (422, "validation-failed", ephemeral.InvalidRequest),
    (400, "validation-failed", ephemeral.InvalidRequest),
])
def test_client_errors_are_typed_and_not_retried(status: int, slug: str, cls: type) -> None:
    script = Script(problem(status, slug))
    with pytest.raises(cls) as info:
        script.client().runs.create("x", max_cost_micros=1)
    assert len(script.requests) == 1
    assert info.value.status == status and info.value.slug == slug
    assert isinstance(info.value, ephemeral.APIError)


def test_a_create_waits_out_an_idempotency_key_in_use() -> None:
    script = Script(problem(409, "idempotency-key-in-use"), created())
    assert script.client().runs.create("x", max_cost_micros=1).id == RUN["id"]


def test_commands_are_never_retried() -> None:
    sandbox = {"id": "sbx_" + "b" * 32, "object": "sandbox", "status": "running"}
    for failure in (problem(503, "shutting-down", {"retry-after": "0"}), httpx.ConnectError("boom")):
        script = Script(httpx.Response(200, json=sandbox), failure)
        c = script.client()
        sbx = c.sandboxes.connect(sandbox["id"])
        with pytest.raises((ephemeral.ServerError, ephemeral.ConnectionError)):
            sbx.commands.run("rm -rf data && make deploy")
        assert [r.url.path for r in script.requests][-1].endswith("/commands")
        assert len(script.requests) == 2 and script.sleeps == []


def test_transport_failures_become_the_sdks_own_errors_without_the_key() -> None:
    script = Script(*[httpx.ReadTimeout("slow")] * 3)
    with pytest.raises(ephemeral.TimeoutError) as timeout:
        script.client().runs.get(RUN["id"])
    assert isinstance(timeout.value, TimeoutError)  # the builtin too
    script = Script(httpx.ConnectError("refused"))
    with pytest.raises(ephemeral.ConnectionError) as refused:
        script.client(max_retries=0).runs.get(RUN["id"])
    assert isinstance(refused.value, ConnectionError)
    for exc in (timeout.value, refused.value):
        assert KEY not in str(exc) and KEY not in repr(exc)


def test_a_non_problem_error_body_still_gives_a_typed_error() -> None:
    script = Script(*[httpx.Response(502, text="<html>bad gateway</html>")] * 3)
    with pytest.raises(ephemeral.ServerError) as info:
        script.client().runs.list()
    assert info.value.status == 502 and "bad gateway" in info.value.detail


def test_field_errors_are_exposed() -> None:
    script = Script(problem(400, "invalid-request", errors=[{"field": "bogus", "message": "unknown field"}]))
    with pytest.raises(ephemeral.InvalidRequest) as info:
        script.client().runs.create("x", max_cost_micros=1)
    assert info.value.field == "bogus"
    assert info.value.errors == [ephemeral.FieldError("bogus", "unknown field")]


def test_the_key_is_in_no_repr() -> None:
    c = Script().client()
    assert KEY not in repr(c) and KEY not in repr(c._transport)


def test_a_lost_cancel_answer_then_run_finished_returns_the_run() -> None:
    script = Script(httpx.ReadError("lost"), problem(409, "run-finished"),
                    httpx.Response(200, json={**RUN, "status": "cancelled"}))
    assert script.client().runs.cancel(RUN["id"]).status == "cancelled"


def test_uploads_are_resent_whole_or_not_at_all(tmp_path: Path) -> None:
    sandbox = {"id": "sbx_" + "c" * 32, "object": "sandbox", "status": "running"}
    written = {"object": "file", "path": "/tmp/x/a", "size": 3, "sha256": "0"}
    local = tmp_path / "local.bin"
    local.write_bytes(b"0123456789" * 10_000)
    script = Script(httpx.Response(200, json=sandbox),
                    problem(503, "internal", {"retry-after": "0"}), httpx.Response(201, json=written),
                    problem(503, "internal", {"retry-after": "0"}), httpx.Response(201, json=written))
    sbx = script.client().sandboxes.connect(sandbox["id"])
    sbx.files.write("a", local)
    with open(local, "rb") as f:
        f.seek(5)
        sbx.files.write("b", f)
    bodies = [r.content for r in script.requests[1:]]
    assert bodies[0] == bodies[1] == local.read_bytes()
    assert bodies[2] == bodies[3] == local.read_bytes()[5:]
    assert script.requests[1].headers["content-length"] == str(100_000)

    script = Script(httpx.Response(200, json=sandbox), problem(503, "internal", {"retry-after": "0"}))
    sbx = script.client().sandboxes.connect(sandbox["id"])
    with pytest.raises(ephemeral.ServerError):
        sbx.files.write("c", (chunk for chunk in [b"one-", b"shot"]))
    assert len(script.requests) == 2 and script.requests[1].content == b"one-shot"


def test_a_checksum_mismatch_leaves_no_file(tmp_path: Path) -> None:
    bad = httpx.Response(200, content=b"hello", headers={"etag": '"' + "0" * 64 + '"'})
    script = Script(bad)
    with pytest.raises(ephemeral.IntegrityError):
        script.client().runs.files.download(RUN["id"], "out/report.md", to=tmp_path)
    assert list(tmp_path.iterdir()) == []


def sse(*events: tuple[int, str, dict[str, object]]) -> bytes:
    return b"retry: 10\n\n" + b"".join(
        f"id: {i}\nevent: {t}\ndata: {json.dumps(d)}\n\n".encode() for i, t, d in events
    )


class BreakingStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """Yields ``payload``, then fails as a dropped connection does."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def __iter__(self) -> Iterator[bytes]:
        yield self.payload
        raise httpx.RemoteProtocolError("peer closed connection")

    async def __aiter__(self):  # type: ignore[override]
        yield self.payload
        raise httpx.RemoteProtocolError("peer closed connection")


TIMELINE = [(1, "budget.reserved", {}), (2, "vm.ready", {}), (3, "shell.output", {"data": "hi"}),
            (4, "run.succeeded", {}), (5, "worker.destroyed", {})]


def stream_script() -> Script:
    whole = sse(*TIMELINE)
    cut = whole[: whole.index(b"id: 3") + 12]  # mid-event 3
    first = httpx.Response(201, stream=BreakingStream(cut),
                           headers={"location": f"/v1/runs/{RUN['id']}", "content-type": "text/event-stream"})
    # The second connection replays from the start, as a careless server might.
    second = httpx.Response(200, content=whole, headers={"content-type": "text/event-stream"})
    return Script(first, second)


def test_a_broken_stream_resumes_after_the_last_event_without_duplicates() -> None:
    script = stream_script()
    with script.client().runs.create("x", max_cost_micros=1, stream=True) as events:
        seen = [(e.id, e.type) for e in events]
    assert seen == [(i, t) for i, t, _ in TIMELINE]
    assert script.requests[1].headers["last-event-id"] == "2"
    assert script.requests[1].url.path == f"/v1/runs/{RUN['id']}/events"
    assert script.sleeps == [0.01]


@pytest.mark.anyio
async def test_async_resume_and_retry_parity() -> None:
    script = stream_script()
    async with script.async_client() as c:
        events = await c.runs.create("x", max_cost_micros=1, stream=True)
        seen = [e.id async for e in events]
    assert seen == [1, 2, 3, 4, 5]
    script = Script(problem(503, "internal", {"retry-after": "0"}), created())
    async with script.async_client() as c:
        assert (await c.runs.create("x", max_cost_micros=1)).id == RUN["id"]
    assert len({r.headers["idempotency-key"] for r in script.requests}) == 1


def test_file_paths_and_ids_cannot_walk_the_url() -> None:
    from ephemeral._bodies import encode_file_path
    from ephemeral._runs import quote_id

    assert encode_file_path("out/a b#?.txt") == "out/a%20b%23%3F.txt"
    assert encode_file_path("/tmp/x.txt") == "%2Ftmp/x.txt"
    assert encode_file_path("../etc/passwd") == "%2E%2E/etc/passwd"
    assert encode_file_path("a/./b") == "a/%2E/b"
    assert quote_id("..") == "%2E%2E" and quote_id("run_1/../x") == "run_1%2F..%2Fx"
    script = Script(problem(400, "validation-failed", errors=[{"field": "path", "message": "outside"}]))
    sandbox_files = ephemeral.Sandbox(script.client()._transport, ephemeral.SandboxInfo.from_dict(
        {"id": "sbx_" + "d" * 32})).files
    with pytest.raises(ephemeral.InvalidRequest):
        sandbox_files.write("../../../runs", b"x")
    assert script.requests[0].url.raw_path.endswith(b"/files/%2E%2E/%2E%2E/%2E%2E/runs")


def test_run_files_download_paths_and_checksums(tmp_path: Path) -> None:
    import hashlib
    import io

    body = b"x,y\n1,2\n" * 1000
    good = hashlib.sha256(body).hexdigest()

    def answer() -> httpx.Response:
        return httpx.Response(200, content=body, headers={"etag": f'"{good}"', "content-type": "text/csv"})

    listing = {"object": "list", "data": [{"path": "out/data.csv", "size": len(body), "sha256": good,
                                           "content_type": "text/csv"}]}
    script = Script(httpx.Response(200, json=listing), answer(), answer(), answer(), answer())
    files = script.client().runs.files
    (entry,) = files.list(RUN["id"])
    assert entry == ephemeral.RunFile("out/data.csv", len(body), good, "text/csv")
    assert files.download(RUN["id"], entry.path, to=tmp_path) == tmp_path / "data.csv"
    assert files.download(RUN["id"], entry.path, to=tmp_path / "n" / "c.csv").read_bytes() == body
    buffer = io.BytesIO()
    assert files.download(RUN["id"], entry.path, to=buffer) is None and buffer.getvalue() == body
    assert files.read(RUN["id"], entry.path) == body
    assert script.requests[1].url.raw_path == f"/v1/runs/{RUN['id']}/files/out/data.csv".encode()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["c.csv", "data.csv"]


def test_a_stream_cut_cleanly_by_an_intermediary_still_delivers_everything() -> None:
    # An HTTP/1.0 hop turns a cut into a clean end of a close-delimited body:
    # the run has ended, but the stream must still deliver its events.
    empty = httpx.Response(201, content=b"retry: 10\n\nid: 1\nevent: budget", headers={
        "location": f"/v1/runs/{RUN['id']}", "content-type": "text/event-stream"})
    finished = httpx.Response(200, json={**RUN, "status": "succeeded"})
    whole = httpx.Response(200, content=sse(*TIMELINE), headers={"content-type": "text/event-stream"})
    script = Script(empty, finished, whole)
    with script.client().runs.create("x", max_cost_micros=1, stream=True) as events:
        assert [e.id for e in events] == [1, 2, 3, 4, 5]
    assert [r.method for r in script.requests] == ["POST", "GET", "GET"]


def test_reading_past_the_end_of_a_finished_run_stops() -> None:
    def nothing() -> httpx.Response:
        return httpx.Response(200, content=b"retry: 2000\n\n", headers={"content-type": "text/event-stream"})

    script = Script(nothing(), httpx.Response(200, json={**RUN, "status": "succeeded"}), nothing())
    assert list(script.client().runs.events(RUN["id"], after=5)) == []
    assert script.requests[0].headers["last-event-id"] == "5"
    assert script.requests[2].headers["last-event-id"] == "5" and script.sleeps == []


def test_a_live_run_whose_stream_ends_early_is_reopened() -> None:
    def part(*events: tuple[int, str, dict[str, object]]) -> httpx.Response:
        return httpx.Response(200, content=sse(*events), headers={"content-type": "text/event-stream"})

    # A draining node closes streams cleanly: the run is still running.
    script = Script(part(*TIMELINE[:2]), part(), httpx.Response(200, json={**RUN, "status": "running"}),
                    part(*TIMELINE[2:]))
    assert [e.id for e in script.client().runs.events(RUN["id"])] == [1, 2, 3, 4, 5]
    assert [r.headers.get("last-event-id") for r in script.requests] == [None, "2", None, "2"]


def test_a_streamed_command_that_cannot_finish_raises() -> None:
    sandbox = {"id": "sbx_" + "e" * 32, "object": "sandbox", "status": "running"}
    stream = (b'event: output\ndata: {"stream": "stdout", "data": "partial"}\n\n'
              b'event: exit\ndata: {"error": "the sandbox has ended (budget_exceeded)"}\n\n')
    script = Script(httpx.Response(200, json=sandbox),
                    httpx.Response(200, content=stream, headers={"content-type": "text/event-stream"}))
    seen: list[str] = []
    sbx = script.client().sandboxes.connect(sandbox["id"])
    with pytest.raises(ephemeral.CommandError, match="budget_exceeded"):
        sbx.commands.run("make", on_stdout=seen.append)
    assert seen == ["partial"]
