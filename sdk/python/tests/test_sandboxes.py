"""Sandboxes end to end (docs/api-shapes.md, "Sandboxes"). Marker: sandboxes."""

from __future__ import annotations

import hashlib
import io
import os
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import BUDGET
from support import FaultProxy, Server, no_keepalive

import ephemeral
from ephemeral import Client, Sandbox

pytestmark = pytest.mark.sandboxes


@pytest.fixture
def sbx(client: Client) -> Iterator[Sandbox]:
    with client.sandboxes.create(max_cost_micros=BUDGET) as sandbox:
        yield sandbox


def test_a_with_block_creates_and_deletes(client: Client, tag: dict[str, str]) -> None:
    with client.sandboxes.create(max_cost_micros=BUDGET, timeout_seconds=120,
                                 idle_timeout_seconds=60, metadata=tag) as sandbox:
        assert sandbox.id.startswith("sbx_") and len(sandbox.id) == 36
        info = sandbox.info
        assert info.status == "running" and info.running and info.end_reason is None
        assert info.limits.timeout_seconds == 120 and info.limits.idle_timeout_seconds == 60
        assert info.metadata == tag and sandbox.refresh().isolation == "wasm"
        assert info.cost.reserved_micros == BUDGET
        assert info.created_at is not None and info.expires_at is not None
        assert (info.expires_at - info.created_at).total_seconds() == pytest.approx(120, abs=1)
        assert client.sandboxes.get(sandbox.id).running
        assert sandbox.refresh().running
    ended = client.sandboxes.get(sandbox.id)
    assert ended.status == "ended" and ended.end_reason == "deleted"
    assert ended.cost.charged_micros + ended.cost.released_micros == ended.cost.reserved_micros
    assert sandbox.info.status == "ended"  # the handle saw its own deletion


def test_an_exception_in_the_block_still_deletes(client: Client) -> None:
    with pytest.raises(RuntimeError), client.sandboxes.create(max_cost_micros=BUDGET) as sandbox:
        raise RuntimeError("the agent crashed")
    assert client.sandboxes.get(sandbox.id).end_reason == "deleted"


def test_a_command_answers_whole(sbx: Sandbox) -> None:
    result = sbx.commands.run("echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert result.truncated is False and result.limit is None and result.duration_ms >= 0
    assert not result.ok
    assert sbx.commands.run("whoami").stdout == "worker\n"


def test_state_carries_over_between_commands(sbx: Sandbox) -> None:
    sbx.commands.run("mkdir -p work && cd work && export GREETING=hi && echo kept > f.txt")
    assert sbx.commands.run("pwd").stdout.strip().endswith("/work")
    assert sbx.commands.run("echo $GREETING; cat f.txt").stdout == "hi\nkept\n"


def test_stdin_and_env_are_per_command(sbx: Sandbox) -> None:
    assert sbx.commands.run("cat", stdin="piped in").stdout == "piped in"
    assert sbx.commands.run("echo $ONLY_HERE", env={"ONLY_HERE": "yes"}).stdout == "yes\n"
    assert sbx.commands.run('echo "${ONLY_HERE:-unset}"').stdout == "unset\n"


def test_streamed_output_reaches_the_callbacks_in_order(sbx: Sandbox) -> None:
    pieces: list[tuple[str, str]] = []
    result = sbx.commands.run(
        "echo one; echo two >&2; sleep 0.3; echo three",
        on_stdout=lambda text: pieces.append(("stdout", text)),
        on_stderr=lambda text: pieces.append(("stderr", text)),
    )
    assert result.exit_code == 0
    assert "".join(t for s, t in pieces if s == "stdout") == result.stdout == "one\nthree\n"
    assert "".join(t for s, t in pieces if s == "stderr") == result.stderr == "two\n"
    assert [s for s, _ in pieces].index("stderr") < len(pieces) - 1  # two came before three


def test_a_command_timeout_is_a_named_limit(sbx: Sandbox) -> None:
    started = time.monotonic()
    result = sbx.commands.run("sleep 20", timeout=1)
    assert result.limit == "command_timeout" and not result.ok
    assert time.monotonic() - started < 10
    assert sbx.commands.run("echo still here").stdout == "still here\n"


def test_files_write_read_list_remove(sbx: Sandbox, tmp_path: Path) -> None:
    local = tmp_path / "local.bin"
    local.write_bytes(os.urandom(300_000))
    written = {
        "text.txt": sbx.files.write("text.txt", "héllo\n"),
        "bytes.bin": sbx.files.write("bytes.bin", b"\x00\x01\x02"),
        "buffer.bin": sbx.files.write("buffer.bin", io.BytesIO(b"from a file object")),
        "path.bin": sbx.files.write("path.bin", local),
        "chunks.txt": sbx.files.write("chunks.txt", (c for c in [b"gen", b"erated"])),
        "dir/nested.txt": sbx.files.write("dir/nested.txt", "deep"),
    }
    assert written["text.txt"].size == len("héllo\n".encode())
    assert written["path.bin"].sha256 == hashlib.sha256(local.read_bytes()).hexdigest()
    assert all(w.path.startswith("/tmp/") and w.path.endswith(name) for name, w in written.items())

    assert sbx.files.read("text.txt") == "héllo\n".encode()
    assert sbx.files.read("path.bin") == local.read_bytes()
    assert sbx.files.read("chunks.txt") == b"generated"
    with sbx.files.read_stream("path.bin", chunk_size=65536) as stream:
        assert b"".join(stream) == local.read_bytes()
    assert sbx.commands.run("cat dir/nested.txt buffer.bin").stdout == "deepfrom a file object"

    entries = {Path(e.path).name: e for e in sbx.files.list()}
    assert {"text.txt", "bytes.bin", "path.bin", "dir"} <= set(entries)
    assert entries["dir"].type == "dir" and entries["path.bin"].size == 300_000
    assert entries["text.txt"].mode.isdigit() and entries["text.txt"].modified_at is not None
    assert [Path(e.path).name for e in sbx.files.list("dir")] == ["nested.txt"]

    sbx.files.remove("text.txt")
    with pytest.raises(ephemeral.NotFound):
        sbx.files.read("text.txt")
    with pytest.raises(ephemeral.NotFound):
        sbx.files.remove("text.txt")


def test_absolute_paths_under_tmp_and_names_that_need_quoting(sbx: Sandbox) -> None:
    sbx.files.write("/tmp/abs file #1?.txt", "absolute")
    assert sbx.commands.run("cat '/tmp/abs file #1?.txt'").stdout == "absolute"
    assert sbx.files.read("/tmp/abs file #1?.txt") == b"absolute"
    names = [Path(e.path).name for e in sbx.files.list("/tmp")]
    assert "abs file #1?.txt" in names


def test_a_path_outside_the_sandbox_is_a_400_naming_it(sbx: Sandbox) -> None:
    for bad in ("../escape.txt", "/etc/passwd-copy"):
        with pytest.raises(ephemeral.InvalidRequest) as info:
            sbx.files.write(bad, "x")
        assert info.value.field == "path"


def test_a_file_over_the_disk_quota_is_413(sbx: Sandbox) -> None:
    quota = sbx.info.limits.disk_bytes or 64 << 20
    chunk = b"\0" * (1 << 20)
    with pytest.raises(ephemeral.PayloadTooLarge):
        sbx.files.write("huge.bin", [chunk] * (quota // len(chunk) + 2))
    assert "huge.bin" not in [Path(e.path).name for e in sbx.files.list()]


def test_an_ended_sandbox_takes_no_commands(client: Client) -> None:
    sandbox = client.sandboxes.create(max_cost_micros=BUDGET)
    assert sandbox.kill().status == "ended"
    assert sandbox.kill().end_reason == "deleted"  # again: not an error
    with pytest.raises(ephemeral.SandboxEnded) as info:
        sandbox.commands.run("echo too late")
    assert info.value.status == 409
    assert client.sandboxes.kill(sandbox.id).status == "ended"


def test_events_tell_the_whole_story(client: Client) -> None:
    with client.sandboxes.create(max_cost_micros=BUDGET) as sandbox:
        sandbox.commands.run("echo from a command")
        sandbox.files.write("put.txt", "x")
    events = list(sandbox.events())
    types = [e.type for e in events]
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert types[0] == "budget.reserved" and types[-1] == "worker.destroyed"
    for expected in ("vm.ready", "shell.command", "shell.output", "shell.exit", "file.written",
                     "vm.destroyed", "sandbox.ended"):
        assert expected in types
    ended = next(e for e in events if e.type == "sandbox.ended")
    assert ended.data["end_reason"] == "deleted"
    later = list(client.sandboxes.events(sandbox.id, after=events[-3].id))
    assert [e.id for e in later] == [e.id for e in events[-2:]]
    assert list(client.sandboxes.events(sandbox.id, after=events[-1].id)) == []


def test_list_iter_and_connect(client: Client, tag: dict[str, str]) -> None:
    made = [client.sandboxes.create(max_cost_micros=BUDGET, metadata=tag) for _ in range(3)]
    try:
        page = client.sandboxes.list(limit=2)
        assert [s.id for s in page] == [made[2].id, made[1].id] and page.has_more
        assert page.next_before == made[1].id
        tagged = [s.id for s in client.sandboxes.iter(page_size=2) if s.metadata == tag]
        assert tagged == [s.id for s in reversed(made)]
        again = client.sandboxes.connect(made[0].id)
        assert again.info.id == made[0].id
        assert again.commands.run("echo connected").stdout == "connected\n"
    finally:
        for sandbox in made:
            sandbox.kill()


def test_sandbox_errors(client: Client, server: Server) -> None:
    with pytest.raises(ephemeral.NotFound):
        client.sandboxes.get("sbx_" + "0" * 32)
    with pytest.raises(ephemeral.NotFound):
        client.sandboxes.connect("not-a-sandbox")
    with pytest.raises(ephemeral.InvalidRequest) as info:
        client.sandboxes.create(max_cost_micros=BUDGET, extra_body={"bogus": 1})
    assert info.value.field == "bogus"
    with Client(server.url, server.poor_key) as poor, pytest.raises(ephemeral.InsufficientFunds):
        poor.sandboxes.create(max_cost_micros=50_000)
    with client.sandboxes.create(max_cost_micros=BUDGET) as mine, \
            Client(server.url, server.other_key) as other, pytest.raises(ephemeral.NotFound):
        other.sandboxes.get(mine.id)


def test_a_create_whose_answer_is_lost_makes_exactly_one_sandbox(
        server: Server, proxy: FaultProxy, client: Client, tag: dict[str, str]) -> None:
    proxy.drop_response()
    with Client(proxy.url, server.key, timeout=30) as through_proxy:
        sandbox = through_proxy.sandboxes.create(max_cost_micros=BUDGET, metadata=tag)
    keys = proxy.header_values("Idempotency-Key")
    assert len(keys) == 2 and keys[0] == keys[1]
    tagged = [s.id for s in client.sandboxes.iter(page_size=100) if s.metadata == tag]
    assert tagged == [sandbox.id]
    client.sandboxes.kill(sandbox.id)


def test_a_command_whose_answer_is_lost_is_not_run_twice(
        server: Server, proxy: FaultProxy, client: Client) -> None:
    proxy.pass_next()  # the GET of connect()
    proxy.drop_response()  # the command's POST
    http = httpx.Client(limits=no_keepalive(), timeout=30)
    with client.sandboxes.create(max_cost_micros=BUDGET) as sandbox:
        with Client(proxy.url, server.key, http_client=http) as through_proxy, http:
            remote = through_proxy.sandboxes.connect(sandbox.id)
            with pytest.raises(ephemeral.ConnectionError):
                remote.commands.run("echo ran >> count.txt")
        assert sandbox.commands.run("cat count.txt").stdout == "ran\n"


@pytest.mark.anyio
async def test_async_sandboxes(aclient: ephemeral.AsyncClient, tmp_path: Path) -> None:
    async with aclient.sandboxes.create(max_cost_micros=BUDGET) as sandbox:
        assert isinstance(sandbox, ephemeral.AsyncSandbox) and sandbox.info.running
        result = await sandbox.commands.run("echo a; echo b >&2", timeout=30)
        assert (result.stdout, result.stderr) == ("a\n", "b\n")
        seen: list[str] = []

        async def collect(text: str) -> None:
            seen.append(text)

        streamed = await sandbox.commands.run("echo x; echo y", on_stdout=collect,
                                              on_stderr=seen.append)
        assert "".join(seen) == streamed.stdout == "x\ny\n"
        local = tmp_path / "up.bin"
        local.write_bytes(os.urandom(100_000))
        assert (await sandbox.files.write("up.bin", local)).size == 100_000
        assert await sandbox.files.read("up.bin") == local.read_bytes()
        async with sandbox.files.read_stream("up.bin") as stream:
            assert b"".join([c async for c in stream]) == local.read_bytes()
        assert "up.bin" in [Path(e.path).name for e in await sandbox.files.list()]
        await sandbox.files.remove("up.bin")
        with pytest.raises(ephemeral.NotFound):
            await sandbox.files.read("up.bin")
        assert (await aclient.sandboxes.connect(sandbox.id)).id == sandbox.id
        assert (await sandbox.refresh()).running
    assert (await aclient.sandboxes.get(sandbox.id)).end_reason == "deleted"
    other = await aclient.sandboxes.create(max_cost_micros=BUDGET)
    page = await aclient.sandboxes.list(limit=1)
    assert page.data[0].id == other.id
    assert (await other.kill()).status == "ended"
    with pytest.raises(ephemeral.SandboxEnded):
        await other.commands.run("true")
    events = [e.type async for e in other.events()]
    assert events[-1] == "worker.destroyed"
