"""``client.sandboxes``: sandboxes for agents that bring their own loop.

A :class:`Sandbox` is a handle: ``sbx.commands.run(...)``, ``sbx.files``,
``sbx.kill()``. Used as a context manager it is deleted when the block
ends, so a crashing agent does not leave a sandbox billing until its idle
timeout. Commands are never retried by the SDK: a command whose answer was
lost may well have run, and only the caller knows whether running it again
is safe.
"""

from __future__ import annotations

import builtins
import inspect
import json
import logging
import math
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from types import TracebackType
from typing import Any

import httpx

from ._bodies import FilesParam, UploadData, encode_file_path, files_payload, make_upload
from ._errors import CommandError, ConnectionError, EphemeralError, NotFound
from ._http import AsyncTransport, Request, SyncTransport, parse_json, with_read_timeout
from ._runs import create_request, list_params, quote_id
from ._sse import ServerSentEvent
from ._streams import AsyncByteStream, AsyncEventStream, ByteStream, EventStream, _Reader
from .types import CommandResult, FileEntry, Page, SandboxInfo, WrittenFile

__all__ = [
    "AsyncCommands", "AsyncSandbox", "AsyncSandboxFiles", "AsyncSandboxes",
    "Commands", "Sandbox", "SandboxFiles", "Sandboxes",
]

logger = logging.getLogger("ephemeral")

# A command's own time limit when neither the caller nor the sandbox says.
DEFAULT_COMMAND_TIMEOUT = 60.0
# Waiting for a command's answer: its limit plus this much for the rest.
COMMAND_TIMEOUT_MARGIN = 30.0

OutputCallback = Callable[[str], None]
AsyncOutputCallback = Callable[[str], Awaitable[None] | None]


def sandbox_body(max_cost_micros: int, timeout_seconds: int | None,
                 idle_timeout_seconds: int | None, files: FilesParam | None,
                 zero_data_retention: bool | None, metadata: Mapping[str, str] | None,
                 extra_body: Mapping[str, Any] | None) -> dict[str, Any]:
    optional: dict[str, Any] = {
        "timeout_seconds": timeout_seconds,
        "idle_timeout_seconds": idle_timeout_seconds,
        "files": files_payload(files) if files is not None else None,
        "zero_data_retention": zero_data_retention,
        "metadata": dict(metadata) if metadata is not None else None,
    }
    body: dict[str, Any] = {"max_cost_micros": max_cost_micros}
    body.update({k: v for k, v in optional.items() if v is not None})
    body.update(extra_body or {})
    return body


def command_body(command: str, timeout: float | None, stdin: str | None,
                 env: Mapping[str, str] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"command": command}
    if timeout is not None:
        body["timeout_seconds"] = max(1, math.ceil(timeout))
    if stdin is not None:
        body["stdin"] = stdin
    if env is not None:
        body["env"] = dict(env)
    return body


def _page(data: Any) -> Page[SandboxInfo]:
    return Page([SandboxInfo.from_dict(s) for s in data.get("data", [])],
                bool(data.get("has_more")), data.get("next_before"))


class _CommandOutput:
    """Collects a streamed command: ``output`` events, then one ``exit``."""

    def __init__(self) -> None:
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.result: CommandResult | None = None

    def feed(self, sse: ServerSentEvent) -> tuple[str, str] | None:
        """Returns (stream, text) for an output event; records the result at ``exit``."""
        data = _json_object(sse.data)
        if sse.event == "output":
            stream, text = str(data.get("stream", "stdout")), str(data.get("data", ""))
            (self.stderr if stream == "stderr" else self.stdout).append(text)
            return stream, text
        if sse.event == "exit":
            if "error" in data and "exit_code" not in data:
                raise CommandError(f"the command did not finish: {data['error']}")
            self.result = CommandResult.from_dict(data, "".join(self.stdout), "".join(self.stderr))
        return None


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _is_json(response: httpx.Response) -> bool:
    return str(response.headers.get("content-type", "")).startswith("application/json")


def _stream_ended_early(sandbox_id: str) -> ConnectionError:
    return ConnectionError(
        f"the command's stream in {sandbox_id} ended before its exit; the command may have "
        "run (it is not retried automatically)"
    )


class _SandboxPaths:
    def __init__(self, sandbox_id: str) -> None:
        self.base = f"/v1/sandboxes/{quote_id(sandbox_id)}"

    def file(self, path: str) -> str:
        return f"{self.base}/files/{encode_file_path(path)}"


def _command_timeout(transport: SyncTransport | AsyncTransport, info: SandboxInfo,
                     timeout: float | None) -> httpx.Timeout:
    limit = timeout or info.limits.command_timeout_seconds or DEFAULT_COMMAND_TIMEOUT
    return with_read_timeout(transport.timeout, float(limit) + COMMAND_TIMEOUT_MARGIN)


def _upload_request(path: str, data: UploadData, for_async: bool) -> Request:
    upload = make_upload(data)
    headers = {"Content-Type": "application/octet-stream"}
    if upload.length is not None:
        headers["Content-Length"] = str(upload.length)
    content = upload.content
    if for_async and not isinstance(content, bytes):
        content = _AsyncBody(content)
    elif not for_async and hasattr(content, "__aiter__") and not hasattr(content, "__iter__"):
        raise TypeError("the sync client cannot upload an async iterable: use AsyncClient")
    return Request("PUT", path, content=content, headers=headers, retry=upload.retryable)


class _AsyncBody:
    """An upload body as httpx's AsyncClient needs it: async-iterable only
    (httpx takes anything iterable as a sync stream first). Each iteration
    starts afresh, so a re-iterable body stays resendable."""

    def __init__(self, content: Any) -> None:
        self._content = content

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if hasattr(self._content, "__aiter__"):
            async for chunk in self._content:
                yield chunk
        else:
            for chunk in self._content:
                yield chunk


# -- sync -------------------------------------------------------------------


class Commands:
    """``sbx.commands``: shell commands, one at a time, state carried over."""

    def __init__(self, transport: SyncTransport, sandbox: Sandbox) -> None:
        self._t = transport
        self._sandbox = sandbox

    def run(self, command: str, *, on_stdout: OutputCallback | None = None,
            on_stderr: OutputCallback | None = None, timeout: float | None = None,
            stdin: str | None = None, env: Mapping[str, str] | None = None) -> CommandResult:
        """Runs one command and returns what it did.

        With a callback the output streams (each piece handed over as it
        is written); without, the answer comes whole. ``timeout`` is the
        command's own limit in seconds; hitting it shows as ``limit ==
        "command_timeout"``, not as an exception. Never retried.
        """
        streaming = on_stdout is not None or on_stderr is not None
        request = Request(
            "POST", f"{self._sandbox._paths.base}/commands",
            json=command_body(command, timeout, stdin, env), retry=False, stream=streaming,
            timeout=_command_timeout(self._t, self._sandbox.info, timeout),
            headers={"Accept": "text/event-stream"} if streaming else {},
        )
        if not streaming:
            return CommandResult.from_dict(self._t.json(request))
        return self._follow(self._t.send(request), on_stdout, on_stderr)

    def _follow(self, response: httpx.Response, on_stdout: OutputCallback | None,
                on_stderr: OutputCallback | None) -> CommandResult:
        try:
            if _is_json(response):  # a server that answers whole anyway
                response.read()
                result = CommandResult.from_dict(parse_json(response, "command"))
                _deliver(result, on_stdout, on_stderr)
                return result
            reader, output = _Reader(), _CommandOutput()
            for chunk in response.iter_bytes():
                for sse in reader.feed(chunk):
                    piece = output.feed(sse)
                    if piece is not None:
                        callback = on_stderr if piece[0] == "stderr" else on_stdout
                        if callback is not None:
                            callback(piece[1])
                    if output.result is not None:
                        return output.result
        except httpx.TransportError as exc:
            raise _stream_ended_early(self._sandbox.id) from exc
        finally:
            response.close()
        raise _stream_ended_early(self._sandbox.id)


def _deliver(result: CommandResult, on_stdout: OutputCallback | None,
             on_stderr: OutputCallback | None) -> None:
    if on_stdout is not None and result.stdout:
        on_stdout(result.stdout)
    if on_stderr is not None and result.stderr:
        on_stderr(result.stderr)


class SandboxFiles:
    """``sbx.files``: files in the sandbox (relative to its scratch folder, or under /tmp)."""

    def __init__(self, transport: SyncTransport, paths: _SandboxPaths) -> None:
        self._t = transport
        self._paths = paths

    def write(self, path: str, data: UploadData) -> WrittenFile:
        """Writes a file from bytes, text, a local path, an open binary file or chunks.

        The body is streamed in chunks, never read whole into memory. Bytes,
        text, paths and seekable files are resent on a retry; a one-shot
        stream (a generator, a pipe) is sent once.
        """
        return WrittenFile.from_dict(self._t.json(_upload_request(self._paths.file(path), data, False)))

    def read(self, path: str) -> bytes:
        """The file's bytes."""
        return self._t.send(Request("GET", self._paths.file(path), headers={"Accept": "*/*"})).content

    def read_stream(self, path: str, *, chunk_size: int | None = None) -> ByteStream:
        """The file's bytes chunk by chunk: ``with sbx.files.read_stream(p) as s: for c in s``."""
        request = Request("GET", self._paths.file(path), headers={"Accept": "*/*"}, stream=True)
        return ByteStream(self._t.send(request), chunk_size)

    def list(self, dir: str | None = None) -> builtins.list[FileEntry]:
        """Entries of ``dir`` (default: the scratch folder)."""
        params = {"dir": dir} if dir is not None else None
        data = self._t.json(Request("GET", f"{self._paths.base}/files", params=params))
        return [FileEntry.from_dict(e) for e in data.get("data", [])]

    def remove(self, path: str) -> None:
        """Deletes the file; :class:`NotFound` if it is not there."""
        try:
            self._t.send(Request("DELETE", self._paths.file(path))).close()
        except NotFound as exc:
            if exc.attempts == 1:
                raise  # else an earlier attempt of this call removed it


class Sandbox:
    """A running sandbox. ``with`` deletes it at the end of the block."""

    def __init__(self, transport: SyncTransport, info: SandboxInfo) -> None:
        self._t = transport
        self._info = info
        self.id = info.id
        self._paths = _SandboxPaths(info.id)
        self.commands = Commands(transport, self)
        self.files = SandboxFiles(transport, self._paths)

    def __repr__(self) -> str:
        return f"<Sandbox {self.id} {self._info.status}>"

    @property
    def info(self) -> SandboxInfo:
        """The sandbox object as last read (see :meth:`refresh`)."""
        return self._info

    @property
    def status(self) -> str:
        return self._info.status

    def refresh(self) -> SandboxInfo:
        """Reads the sandbox object again (status, cost so far)."""
        self._info = SandboxInfo.from_dict(self._t.json(Request("GET", self._paths.base)))
        return self._info

    def kill(self) -> SandboxInfo:
        """Ends the sandbox and settles it; calling it again is harmless."""
        self._info = SandboxInfo.from_dict(self._t.json(Request("DELETE", self._paths.base)))
        return self._info

    def events(self, *, after: int = 0) -> EventStream:
        """The sandbox's events (commands, files written, its end)."""
        return EventStream(self._t, f"{self._paths.base}/events", resource_id=self.id,
                           finished=lambda: not self.refresh().running, after=after)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.kill()
        except NotFound:
            pass
        except EphemeralError as error:
            if exc_type is None:
                raise
            logger.warning("could not delete sandbox %s: %s", self.id, error)


class Sandboxes:
    """``client.sandboxes``: create, find and end sandboxes."""

    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport

    def create(self, *, max_cost_micros: int, timeout_seconds: int | None = None,
               idle_timeout_seconds: int | None = None, files: FilesParam | None = None,
               zero_data_retention: bool | None = None, metadata: Mapping[str, str] | None = None,
               idempotency_key: str | None = None,
               extra_body: Mapping[str, Any] | None = None) -> Sandbox:
        """Creates a sandbox (retried with one Idempotency-Key, so never two)."""
        body = sandbox_body(max_cost_micros, timeout_seconds, idle_timeout_seconds, files,
                            zero_data_retention, metadata, extra_body)
        data = self._t.json(create_request(body, idempotency_key, False, "sandboxes"))
        return Sandbox(self._t, SandboxInfo.from_dict(data))

    def get(self, sandbox_id: str) -> SandboxInfo:
        return SandboxInfo.from_dict(self._t.json(Request("GET", _SandboxPaths(sandbox_id).base)))

    def connect(self, sandbox_id: str) -> Sandbox:
        """A handle on an existing sandbox (made by another process, say)."""
        return Sandbox(self._t, self.get(sandbox_id))

    def list(self, *, limit: int | None = None, before: str | None = None) -> Page[SandboxInfo]:
        return _page(self._t.json(Request("GET", "/v1/sandboxes", params=list_params(limit, before))))

    def iter(self, *, page_size: int | None = None, before: str | None = None) -> Iterator[SandboxInfo]:
        while True:
            page = self.list(limit=page_size, before=before)
            yield from page.data
            if not page.has_more or not page.next_before:
                return
            before = page.next_before

    def kill(self, sandbox_id: str) -> SandboxInfo:
        """Ends a sandbox by id (``DELETE``); ending an ended one is not an error."""
        return SandboxInfo.from_dict(self._t.json(Request("DELETE", _SandboxPaths(sandbox_id).base)))

    def events(self, sandbox_id: str, *, after: int = 0) -> EventStream:
        """The sandbox's events after event ``after``."""
        return EventStream(self._t, f"{_SandboxPaths(sandbox_id).base}/events",
                           resource_id=sandbox_id, after=after,
                           finished=lambda: not self.get(sandbox_id).running)


# -- async ------------------------------------------------------------------


async def _call(callback: AsyncOutputCallback | None, text: str) -> None:
    if callback is not None:
        result = callback(text)
        if inspect.isawaitable(result):
            await result


class AsyncCommands:
    """The async twin of :class:`Commands`; callbacks may be plain or ``async``."""

    def __init__(self, transport: AsyncTransport, sandbox: AsyncSandbox) -> None:
        self._t = transport
        self._sandbox = sandbox

    async def run(self, command: str, *, on_stdout: AsyncOutputCallback | None = None,
                  on_stderr: AsyncOutputCallback | None = None, timeout: float | None = None,
                  stdin: str | None = None, env: Mapping[str, str] | None = None) -> CommandResult:
        streaming = on_stdout is not None or on_stderr is not None
        request = Request(
            "POST", f"{self._sandbox._paths.base}/commands",
            json=command_body(command, timeout, stdin, env), retry=False, stream=streaming,
            timeout=_command_timeout(self._t, self._sandbox.info, timeout),
            headers={"Accept": "text/event-stream"} if streaming else {},
        )
        if not streaming:
            return CommandResult.from_dict(await self._t.json(request))
        return await self._follow(await self._t.send(request), on_stdout, on_stderr)

    async def _follow(self, response: httpx.Response, on_stdout: AsyncOutputCallback | None,
                      on_stderr: AsyncOutputCallback | None) -> CommandResult:
        try:
            if _is_json(response):
                await response.aread()
                result = CommandResult.from_dict(parse_json(response, "command"))
                if result.stdout:
                    await _call(on_stdout, result.stdout)
                if result.stderr:
                    await _call(on_stderr, result.stderr)
                return result
            reader, output = _Reader(), _CommandOutput()
            async for chunk in response.aiter_bytes():
                for sse in reader.feed(chunk):
                    piece = output.feed(sse)
                    if piece is not None:
                        await _call(on_stderr if piece[0] == "stderr" else on_stdout, piece[1])
                    if output.result is not None:
                        return output.result
        except httpx.TransportError as exc:
            raise _stream_ended_early(self._sandbox.id) from exc
        finally:
            await response.aclose()
        raise _stream_ended_early(self._sandbox.id)


class _AsyncFileStream:
    """``read_stream`` of the async client: opened on first use, closed at the end."""

    def __init__(self, transport: AsyncTransport, request: Request, chunk_size: int | None) -> None:
        self._t = transport
        self._request = request
        self._chunk_size = chunk_size
        self._stream: AsyncByteStream | None = None

    async def open(self) -> AsyncByteStream:
        if self._stream is None:
            self._stream = AsyncByteStream(await self._t.send(self._request), self._chunk_size)
        return self._stream

    async def __aenter__(self) -> AsyncByteStream:
        return await self.open()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._stream is not None:
            await self._stream.aclose()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in await self.open():
            yield chunk


class AsyncSandboxFiles:
    """The async twin of :class:`SandboxFiles`."""

    def __init__(self, transport: AsyncTransport, paths: _SandboxPaths) -> None:
        self._t = transport
        self._paths = paths

    async def write(self, path: str, data: UploadData | AsyncIterable[bytes]) -> WrittenFile:
        request = _upload_request(self._paths.file(path), data, True)
        return WrittenFile.from_dict(await self._t.json(request))

    async def read(self, path: str) -> bytes:
        request = Request("GET", self._paths.file(path), headers={"Accept": "*/*"})
        return (await self._t.send(request)).content

    def read_stream(self, path: str, *, chunk_size: int | None = None) -> _AsyncFileStream:
        """``async with sbx.files.read_stream(p) as s: async for chunk in s``."""
        request = Request("GET", self._paths.file(path), headers={"Accept": "*/*"}, stream=True)
        return _AsyncFileStream(self._t, request, chunk_size)

    async def list(self, dir: str | None = None) -> builtins.list[FileEntry]:
        params = {"dir": dir} if dir is not None else None
        data = await self._t.json(Request("GET", f"{self._paths.base}/files", params=params))
        return [FileEntry.from_dict(e) for e in data.get("data", [])]

    async def remove(self, path: str) -> None:
        try:
            await (await self._t.send(Request("DELETE", self._paths.file(path)))).aclose()
        except NotFound as exc:
            if exc.attempts == 1:
                raise


class AsyncSandbox:
    """The async twin of :class:`Sandbox`; ``async with`` deletes it at the end."""

    def __init__(self, transport: AsyncTransport, info: SandboxInfo) -> None:
        self._t = transport
        self._info = info
        self.id = info.id
        self._paths = _SandboxPaths(info.id)
        self.commands = AsyncCommands(transport, self)
        self.files = AsyncSandboxFiles(transport, self._paths)

    def __repr__(self) -> str:
        return f"<AsyncSandbox {self.id} {self._info.status}>"

    @property
    def info(self) -> SandboxInfo:
        return self._info

    @property
    def status(self) -> str:
        return self._info.status

    async def refresh(self) -> SandboxInfo:
        self._info = SandboxInfo.from_dict(await self._t.json(Request("GET", self._paths.base)))
        return self._info

    async def kill(self) -> SandboxInfo:
        self._info = SandboxInfo.from_dict(await self._t.json(Request("DELETE", self._paths.base)))
        return self._info

    def events(self, *, after: int = 0) -> AsyncEventStream:
        async def finished() -> bool:
            return not (await self.refresh()).running

        return AsyncEventStream(self._t, f"{self._paths.base}/events", resource_id=self.id,
                                finished=finished, after=after)

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        try:
            await self.kill()
        except NotFound:
            pass
        except EphemeralError as error:
            if exc_type is None:
                raise
            logger.warning("could not delete sandbox %s: %s", self.id, error)


class AsyncSandboxCreation:
    """What ``AsyncClient.sandboxes.create`` returns: await it, or ``async with`` it."""

    def __init__(self, create: Callable[[], Awaitable[AsyncSandbox]]) -> None:
        self._create = create
        self._sandbox: AsyncSandbox | None = None

    def __await__(self) -> Generator[Any, None, AsyncSandbox]:
        return self._create().__await__()

    async def __aenter__(self) -> AsyncSandbox:
        self._sandbox = await self._create()
        return self._sandbox

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._sandbox is not None:
            await self._sandbox.__aexit__(exc_type, exc, tb)


class AsyncSandboxes:
    """The async twin of :class:`Sandboxes`."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    def create(self, *, max_cost_micros: int, timeout_seconds: int | None = None,
               idle_timeout_seconds: int | None = None, files: FilesParam | None = None,
               zero_data_retention: bool | None = None, metadata: Mapping[str, str] | None = None,
               idempotency_key: str | None = None,
               extra_body: Mapping[str, Any] | None = None) -> AsyncSandboxCreation:
        """``sbx = await client.sandboxes.create(...)``, or ``async with`` it (deleted at the end)."""
        body = sandbox_body(max_cost_micros, timeout_seconds, idle_timeout_seconds, files,
                            zero_data_retention, metadata, extra_body)
        request = create_request(body, idempotency_key, False, "sandboxes")

        async def create() -> AsyncSandbox:
            return AsyncSandbox(self._t, SandboxInfo.from_dict(await self._t.json(request)))

        return AsyncSandboxCreation(create)

    async def get(self, sandbox_id: str) -> SandboxInfo:
        return SandboxInfo.from_dict(await self._t.json(Request("GET", _SandboxPaths(sandbox_id).base)))

    async def connect(self, sandbox_id: str) -> AsyncSandbox:
        return AsyncSandbox(self._t, await self.get(sandbox_id))

    async def list(self, *, limit: int | None = None,
                   before: str | None = None) -> Page[SandboxInfo]:
        params = list_params(limit, before)
        return _page(await self._t.json(Request("GET", "/v1/sandboxes", params=params)))

    async def iter(self, *, page_size: int | None = None,
                   before: str | None = None) -> AsyncIterator[SandboxInfo]:
        while True:
            page = await self.list(limit=page_size, before=before)
            for info in page.data:
                yield info
            if not page.has_more or not page.next_before:
                return
            before = page.next_before

    async def kill(self, sandbox_id: str) -> SandboxInfo:
        request = Request("DELETE", _SandboxPaths(sandbox_id).base)
        return SandboxInfo.from_dict(await self._t.json(request))

    def events(self, sandbox_id: str, *, after: int = 0) -> AsyncEventStream:
        async def finished() -> bool:
            return not (await self.get(sandbox_id)).running

        return AsyncEventStream(self._t, f"{_SandboxPaths(sandbox_id).base}/events",
                                resource_id=sandbox_id, finished=finished, after=after)
