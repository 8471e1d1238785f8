"""`ephemeral mcp` and `/mcp` as the official MCP Python client sees them.

Environment:
  EPHEMERAL_BIN          the `ephemeral` binary; `$EPHEMERAL_BIN mcp` is the stdio server.
  EPHEMERAL_MCP_ISOLATION  the isolation level for the stdio server (default wasm).
  EPHEMERAL_URL          a running `ephemeral serve` (the HTTP tests; skipped when unset).
  EPHEMERAL_API_KEY      a key that server accepts.

Run through `mcp/run-tests.sh`, which makes the virtualenv.
"""

from __future__ import annotations

import contextlib
import json
import os
import urllib.error
import urllib.request
from collections.abc import AsyncIterator

import httpx2
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"run_shell", "run_python", "write_file", "read_file", "list_files"}
# A first call may start a sandbox: give it time.
READ_TIMEOUT_SECONDS = 120.0

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ephemeral_bin() -> str:
    path = os.environ.get("EPHEMERAL_BIN")
    if not path:
        pytest.fail("EPHEMERAL_BIN is not set: the path of the ephemeral binary")
    return path


def mcp_url() -> str:
    return os.environ["EPHEMERAL_URL"].rstrip("/") + "/mcp"


def api_key() -> str:
    key = os.environ.get("EPHEMERAL_API_KEY")
    if not key:
        pytest.fail("EPHEMERAL_URL is set but EPHEMERAL_API_KEY is not")
    return key


needs_http = pytest.mark.skipif(
    not os.environ.get("EPHEMERAL_URL"), reason="EPHEMERAL_URL is not set (no running ephemeral serve)"
)


def stdio_server() -> StdioServerParameters:
    isolation = os.environ.get("EPHEMERAL_MCP_ISOLATION", "wasm")
    return StdioServerParameters(
        command=ephemeral_bin(),
        args=["mcp", "--isolation", isolation],
        env=dict(os.environ),
    )


def http_client(key: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {key}"},
        timeout=httpx2.Timeout(30.0, read=300.0),
    )


@contextlib.asynccontextmanager
async def stdio_session() -> AsyncIterator[ClientSession]:
    async with stdio_client(stdio_server()) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT_SECONDS) as session:
            await session.initialize()
            yield session


@contextlib.asynccontextmanager
async def http_session(key: str) -> AsyncIterator[ClientSession]:
    client = http_client(key)
    async with client:
        async with streamable_http_client(mcp_url(), http_client=client) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT_SECONDS) as session:
                await session.initialize()
                yield session


def text_of(result) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", None) == "text")


# --- stdio: `$EPHEMERAL_BIN mcp` ------------------------------------------------


async def test_stdio_initialize_and_list_tools() -> None:
    async with stdio_session() as session:
        assert session.initialize_result is not None
        assert session.initialize_result.protocol_version in ("2025-06-18", "2025-11-25")
        listed = await session.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.input_schema["type"] == "object", tool.name
            assert "no network access" in (tool.description or ""), tool.name
        assert tools["run_shell"].input_schema["required"] == ["command"]
        assert tools["write_file"].input_schema["required"] == ["path", "content"]


async def test_stdio_run_shell() -> None:
    async with stdio_session() as session:
        result = await session.call_tool("run_shell", {"command": "echo hi"})
        assert not result.is_error, text_of(result)
        assert text_of(result).startswith("hi\n"), text_of(result)
        assert result.structured_content["exit_code"] == 0
        assert result.structured_content["stdout"] == "hi\n"


async def test_stdio_write_then_read_a_file() -> None:
    async with stdio_session() as session:
        written = await session.call_tool("write_file", {"path": "notes/hello.txt", "content": "hello, mcp\n"})
        assert not written.is_error, text_of(written)
        path = written.structured_content["path"]
        assert path.startswith("/") and path.endswith("/notes/hello.txt"), path
        read = await session.call_tool("read_file", {"path": "notes/hello.txt"})
        assert not read.is_error, text_of(read)
        assert text_of(read) == "hello, mcp\n"
        again = await session.call_tool("read_file", {"path": path})
        assert text_of(again) == "hello, mcp\n"
        listing = await session.call_tool("list_files", {})
        assert not listing.is_error, text_of(listing)
        assert "notes" in text_of(listing)


async def test_stdio_a_missing_file_is_a_tool_error() -> None:
    async with stdio_session() as session:
        result = await session.call_tool("read_file", {"path": "/no/such/file.txt"})
        assert result.is_error, text_of(result)
        # The session goes on.
        after = await session.call_tool("run_shell", {"command": "echo still here"})
        assert not after.is_error
        assert "still here" in text_of(after)


async def test_stdio_run_python() -> None:
    async with stdio_session() as session:
        result = await session.call_tool("run_python", {"code": "print(2+2)"})
        assert not result.is_error, text_of(result)
        assert text_of(result).startswith("4\n"), text_of(result)


async def test_stdio_high_level_client() -> None:
    """`mcp.Client` probes `server/discover` first, then falls back to the handshake."""
    async with Client(stdio_server(), read_timeout_seconds=READ_TIMEOUT_SECONDS) as client:
        assert client.protocol_version in ("2025-06-18", "2025-11-25")
        result = await client.call_tool("run_shell", {"command": "echo hi"})
        assert not result.is_error, text_of(result)
        assert text_of(result).startswith("hi\n"), text_of(result)


# --- streamable HTTP: `$EPHEMERAL_URL/mcp` --------------------------------------


@needs_http
async def test_http_run_shell() -> None:
    async with http_session(api_key()) as session:
        listed = await session.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        result = await session.call_tool("run_shell", {"command": "echo hi"})
        assert not result.is_error, text_of(result)
        assert text_of(result).startswith("hi\n"), text_of(result)


@needs_http
async def test_http_sessions_cannot_see_each_others_files() -> None:
    key = api_key()
    async with http_session(key) as first, http_session(key) as second:
        written = await first.call_tool("write_file", {"path": "secret.txt", "content": "first's"})
        assert not written.is_error, text_of(written)
        path = written.structured_content["path"]
        seen = await second.call_tool("read_file", {"path": path})
        assert seen.is_error, text_of(seen)
        own = await first.call_tool("read_file", {"path": path})
        assert text_of(own) == "first's"


@needs_http
async def test_http_high_level_client() -> None:
    """`mcp.Client` over streamable HTTP: discover probe, fallback, one session."""
    async with http_client(api_key()) as http:
        transport = streamable_http_client(mcp_url(), http_client=http)
        async with Client(transport, read_timeout_seconds=READ_TIMEOUT_SECONDS) as client:
            assert client.protocol_version in ("2025-06-18", "2025-11-25")
            written = await client.call_tool("write_file", {"path": "kept.txt", "content": "kept"})
            assert not written.is_error, text_of(written)
            read = await client.call_tool("read_file", {"path": "kept.txt"})
            assert text_of(read) == "kept"


def post_initialize(headers: dict[str, str]) -> urllib.error.HTTPError | None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
    ).encode()
    request = urllib.request.Request(
        mcp_url(),
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=30):
            return None
    except urllib.error.HTTPError as error:
        return error


@needs_http
async def test_http_without_a_key_is_401() -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-key-of-this-server"}):
        error = post_initialize(headers)
        assert error is not None, f"{headers}: the server took it"
        assert error.code == 401, f"{headers}: {error.code}"
        assert error.headers.get("WWW-Authenticate", "").startswith("Bearer"), headers
