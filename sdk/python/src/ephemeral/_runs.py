"""``client.runs``: start runs, read them, follow their events, fetch their files."""

from __future__ import annotations

import builtins
import hashlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal, overload

import anyio
import httpx

from ._bodies import FilesParam, encode_file_path, files_payload, quote_segment
from ._errors import ConnectionError, EphemeralError, IntegrityError, RunFinished
from ._http import AsyncTransport, Request, SyncTransport
from ._streams import AsyncEventStream, EventStream
from .types import Page, Run, RunFile

__all__ = ["AsyncRunFiles", "AsyncRuns", "RunFiles", "Runs"]

PathLike = str | os.PathLike[str]


def quote_id(value: str) -> str:
    """An id as one URL path segment: nothing a caller passes can walk the path."""
    if not value:
        raise ValueError("an id must not be empty")
    return quote_segment(value)


def run_body(
    prompt: str,
    max_cost_micros: int,
    *,
    shell: bool,
    web: bool,
    timeout_seconds: int | None,
    model: str | None,
    connections: Sequence[str] | None,
    files: FilesParam | None,
    outputs: Sequence[str] | None,
    zero_data_retention: bool | None,
    metadata: Mapping[str, str] | None,
    extra_body: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The request body; fields left as None are not sent (the server's defaults apply)."""
    body: dict[str, Any] = {
        "prompt": prompt, "max_cost_micros": max_cost_micros, "shell": shell, "web": web,
    }
    optional: dict[str, Any] = {
        "timeout_seconds": timeout_seconds,
        "model": model,
        "connections": list(connections) if connections is not None else None,
        "files": files_payload(files) if files is not None else None,
        "outputs": list(outputs) if outputs is not None else None,
        "zero_data_retention": zero_data_retention,
        "metadata": dict(metadata) if metadata is not None else None,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    body.update(extra_body or {})
    return body


def create_request(body: dict[str, Any], idempotency_key: str | None, stream: bool,
                   kind: str = "runs") -> Request:
    """A create: an Idempotency-Key always, so every retry of it is the same request."""
    headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
    if stream:
        headers["Accept"] = "text/event-stream"
    return Request("POST", f"/v1/{kind}", json=body, headers=headers, stream=stream)


def list_params(limit: int | None, before: str | None) -> dict[str, str | int]:
    params: dict[str, str | int] = {}
    if limit is not None:
        params["limit"] = limit
    if before is not None:
        params["before"] = before
    return params


def id_from_location(response: httpx.Response) -> str:
    """The new resource's id, from ``Location: /v1/runs/{id}``."""
    location = str(response.headers.get("location", ""))
    resource_id = location.rstrip("/").rsplit("/", 1)[-1]
    if not resource_id:
        response.close()
        raise EphemeralError("the server's 201 has no Location header naming the new resource")
    return resource_id


def etag_sha256(etag: str | None) -> str | None:
    """The sha256 an ETag carries (quotes and a weak ``W/`` prefix removed)."""
    if not etag:
        return None
    return str(etag).strip().removeprefix("W/").strip('"').lower() or None


def download_target(remote_path: str, to: PathLike | None) -> Path:
    """Where a download lands: ``to``, or inside it when it is a folder, or the cwd."""
    name = PurePosixPath(remote_path).name
    if to is not None and not Path(to).is_dir():
        return Path(to)
    if not name:
        raise ValueError(f"cannot name a local file after {remote_path!r}: pass to=")
    return Path(to if to is not None else ".") / name


def _temp_beside(target: Path) -> Path:
    return target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.part")


def check_digest(expected: str | None, actual: str, where: str) -> None:
    if expected is not None and expected != actual:
        raise IntegrityError(f"{where}: sha256 is {actual}, the server announced {expected}")


def _file_request(run_id: str, path: str) -> Request:
    return Request("GET", f"/v1/runs/{quote_id(run_id)}/files/{encode_file_path(path)}",
                   headers={"Accept": "*/*"}, stream=True)


class RunFiles:
    """``client.runs.files``: the files a run's ``outputs`` collected."""

    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport

    def list(self, run_id: str) -> builtins.list[RunFile]:
        """The collected files (empty when none, or under zero data retention)."""
        data = self._t.json(Request("GET", f"/v1/runs/{quote_id(run_id)}/files"))
        return [RunFile.from_dict(f) for f in data.get("data", [])]

    def read(self, run_id: str, path: str) -> bytes:
        """One file's bytes in memory, checked against its sha256."""
        response = self._t.send(_file_request(run_id, path))
        digest, chunks = hashlib.sha256(), []
        try:
            for chunk in response.iter_bytes():
                digest.update(chunk)
                chunks.append(chunk)
        except httpx.TransportError as exc:
            raise ConnectionError(f"the download of {path} broke off: {exc}") from exc
        finally:
            response.close()
        check_digest(etag_sha256(response.headers.get("etag")), digest.hexdigest(), path)
        return b"".join(chunks)

    @overload
    def download(self, run_id: str, path: str, to: PathLike | None = None) -> Path: ...
    @overload
    def download(self, run_id: str, path: str, to: IO[bytes]) -> None: ...

    def download(self, run_id: str, path: str, to: PathLike | IO[bytes] | None = None) -> Path | None:
        """Streams one file to disk and checks its sha256 against the ETag.

        ``to`` is a file path, a folder (the file keeps its name), an open
        binary file, or None for the current folder. A path target is
        written beside itself first and renamed only once the checksum
        matches, so a broken or corrupt download never leaves a file behind.
        """
        response = self._t.send(_file_request(run_id, path))
        try:
            expected = etag_sha256(response.headers.get("etag"))
            if to is not None and hasattr(to, "write"):
                check_digest(expected, self._copy(response, to, path), path)  # type: ignore[arg-type]
                return None
            target = download_target(path, to)
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = _temp_beside(target)
            try:
                with open(temp, "wb") as f:
                    check_digest(expected, self._copy(response, f, path), path)
                os.replace(temp, target)
            finally:
                temp.unlink(missing_ok=True)
            return target
        finally:
            response.close()

    @staticmethod
    def _copy(response: httpx.Response, out: IO[bytes], path: str) -> str:
        digest = hashlib.sha256()
        try:
            for chunk in response.iter_bytes():
                out.write(chunk)
                digest.update(chunk)
        except httpx.TransportError as exc:
            raise ConnectionError(f"the download of {path} broke off: {exc}") from exc
        return digest.hexdigest()


class Runs:
    """``client.runs``: one prompt, one agent, one throwaway sandbox each."""

    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport
        self.files = RunFiles(transport)

    @overload
    def create(self, prompt: str, *, max_cost_micros: int, shell: bool = True, web: bool = False,
               timeout_seconds: int | None = None, model: str | None = None,
               connections: Sequence[str] | None = None, files: FilesParam | None = None,
               outputs: Sequence[str] | None = None, zero_data_retention: bool | None = None,
               metadata: Mapping[str, str] | None = None, idempotency_key: str | None = None,
               stream: Literal[False] = False,
               extra_body: Mapping[str, Any] | None = None) -> Run: ...
    @overload
    def create(self, prompt: str, *, max_cost_micros: int, shell: bool = True, web: bool = False,
               timeout_seconds: int | None = None, model: str | None = None,
               connections: Sequence[str] | None = None, files: FilesParam | None = None,
               outputs: Sequence[str] | None = None, zero_data_retention: bool | None = None,
               metadata: Mapping[str, str] | None = None, idempotency_key: str | None = None,
               stream: Literal[True],
               extra_body: Mapping[str, Any] | None = None) -> EventStream: ...

    def create(self, prompt: str, *, max_cost_micros: int, shell: bool = True, web: bool = False,
               timeout_seconds: int | None = None, model: str | None = None,
               connections: Sequence[str] | None = None, files: FilesParam | None = None,
               outputs: Sequence[str] | None = None, zero_data_retention: bool | None = None,
               metadata: Mapping[str, str] | None = None, idempotency_key: str | None = None,
               stream: bool = False,
               extra_body: Mapping[str, Any] | None = None) -> Run | EventStream:
        """Starts a run. Returns the run (``queued``), or with ``stream=True`` its events.

        The request carries an ``Idempotency-Key`` (``idempotency_key`` or
        a new uuid4) that every retry reuses, so a retried create never
        starts a second run. ``extra_body`` adds fields this SDK does not
        know yet.
        """
        body = run_body(prompt, max_cost_micros, shell=shell, web=web,
                        timeout_seconds=timeout_seconds, model=model, connections=connections,
                        files=files, outputs=outputs, zero_data_retention=zero_data_retention,
                        metadata=metadata, extra_body=extra_body)
        request = create_request(body, idempotency_key, stream)
        if not stream:
            return Run.from_dict(self._t.json(request))
        request.timeout = self._t.stream_timeout()
        response = self._t.send(request)
        return self._stream(id_from_location(response), response=response)

    def get(self, run_id: str) -> Run:
        """The run with its ``timeline``."""
        return Run.from_dict(self._t.json(Request("GET", f"/v1/runs/{quote_id(run_id)}")))

    def list(self, *, limit: int | None = None, before: str | None = None) -> Page[Run]:
        """One page of the organisation's runs, newest first (no timelines)."""
        data = self._t.json(Request("GET", "/v1/runs", params=list_params(limit, before)))
        return Page([Run.from_dict(r) for r in data.get("data", [])],
                    bool(data.get("has_more")), data.get("next_before"))

    def iter(self, *, page_size: int | None = None, before: str | None = None) -> Iterator[Run]:
        """Every run, newest first, fetching pages as the iteration goes."""
        while True:
            page = self.list(limit=page_size, before=before)
            yield from page.data
            if not page.has_more or not page.next_before:
                return
            before = page.next_before

    def cancel(self, run_id: str) -> Run:
        """Asks the run to stop; it ends ``cancelled`` and is settled as usual.

        Raises :class:`RunFinished` if it had already ended, unless an
        earlier attempt of this very call is what ended it (a retry after
        a lost answer), in which case the run is returned.
        """
        try:
            return Run.from_dict(self._t.json(Request("POST", f"/v1/runs/{quote_id(run_id)}/cancel")))
        except RunFinished as exc:
            if exc.attempts > 1:
                return self.get(run_id)
            raise

    def events(self, run_id: str, *, after: int = 0) -> EventStream:
        """The run's events after event ``after``: replayed if it ended, live if not."""
        return self._stream(run_id, after=after)

    def wait(self, run_id: str, *, timeout: float | None = None) -> Run:
        """Blocks until the run has ended and returns it; ``TimeoutError`` after ``timeout`` s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._stream(run_id, deadline=deadline) as events:
            for _ in events:
                pass
        return self.get(run_id)

    def _stream(self, run_id: str, *, after: int = 0, response: httpx.Response | None = None,
                deadline: float | None = None) -> EventStream:
        return EventStream(self._t, f"/v1/runs/{quote_id(run_id)}/events", resource_id=run_id,
                           finished=lambda: self.get(run_id).done, after=after,
                           response=response, deadline=deadline)


class AsyncRunFiles:
    """The async twin of :class:`RunFiles`."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def list(self, run_id: str) -> builtins.list[RunFile]:
        data = await self._t.json(Request("GET", f"/v1/runs/{quote_id(run_id)}/files"))
        return [RunFile.from_dict(f) for f in data.get("data", [])]

    async def read(self, run_id: str, path: str) -> bytes:
        response = await self._t.send(_file_request(run_id, path))
        digest, chunks = hashlib.sha256(), []
        try:
            async for chunk in response.aiter_bytes():
                digest.update(chunk)
                chunks.append(chunk)
        except httpx.TransportError as exc:
            raise ConnectionError(f"the download of {path} broke off: {exc}") from exc
        finally:
            await response.aclose()
        check_digest(etag_sha256(response.headers.get("etag")), digest.hexdigest(), path)
        return b"".join(chunks)

    @overload
    async def download(self, run_id: str, path: str, to: PathLike | None = None) -> Path: ...
    @overload
    async def download(self, run_id: str, path: str, to: IO[bytes]) -> None: ...

    async def download(self, run_id: str, path: str,
                       to: PathLike | IO[bytes] | None = None) -> Path | None:
        """As :meth:`RunFiles.download`; disk writes happen off the event loop."""
        response = await self._t.send(_file_request(run_id, path))
        try:
            expected = etag_sha256(response.headers.get("etag"))
            if to is not None and hasattr(to, "write"):
                out: IO[bytes] = to  # type: ignore[assignment]
                check_digest(expected, await self._copy(response, out.write, path), path)
                return None
            target = download_target(path, to)
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = _temp_beside(target)
            try:
                async with await anyio.open_file(temp, "wb") as f:
                    check_digest(expected, await self._copy(response, f.write, path), path)
                os.replace(temp, target)
            finally:
                temp.unlink(missing_ok=True)
            return target
        finally:
            await response.aclose()

    @staticmethod
    async def _copy(response: httpx.Response, write: Any, path: str) -> str:
        digest = hashlib.sha256()
        try:
            async for chunk in response.aiter_bytes():
                result = write(chunk)
                if hasattr(result, "__await__"):
                    await result
                digest.update(chunk)
        except httpx.TransportError as exc:
            raise ConnectionError(f"the download of {path} broke off: {exc}") from exc
        return digest.hexdigest()


class AsyncRuns:
    """The async twin of :class:`Runs`."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport
        self.files = AsyncRunFiles(transport)

    @overload
    async def create(self, prompt: str, *, max_cost_micros: int, shell: bool = True,
                     web: bool = False, timeout_seconds: int | None = None,
                     model: str | None = None, connections: Sequence[str] | None = None,
                     files: FilesParam | None = None, outputs: Sequence[str] | None = None,
                     zero_data_retention: bool | None = None,
                     metadata: Mapping[str, str] | None = None,
                     idempotency_key: str | None = None, stream: Literal[False] = False,
                     extra_body: Mapping[str, Any] | None = None) -> Run: ...
    @overload
    async def create(self, prompt: str, *, max_cost_micros: int, shell: bool = True,
                     web: bool = False, timeout_seconds: int | None = None,
                     model: str | None = None, connections: Sequence[str] | None = None,
                     files: FilesParam | None = None, outputs: Sequence[str] | None = None,
                     zero_data_retention: bool | None = None,
                     metadata: Mapping[str, str] | None = None,
                     idempotency_key: str | None = None, stream: Literal[True],
                     extra_body: Mapping[str, Any] | None = None) -> AsyncEventStream: ...

    async def create(self, prompt: str, *, max_cost_micros: int, shell: bool = True,
                     web: bool = False, timeout_seconds: int | None = None,
                     model: str | None = None, connections: Sequence[str] | None = None,
                     files: FilesParam | None = None, outputs: Sequence[str] | None = None,
                     zero_data_retention: bool | None = None,
                     metadata: Mapping[str, str] | None = None,
                     idempotency_key: str | None = None, stream: bool = False,
                     extra_body: Mapping[str, Any] | None = None) -> Run | AsyncEventStream:
        """As :meth:`Runs.create`; with ``stream=True`` an async iterator of events."""
        body = run_body(prompt, max_cost_micros, shell=shell, web=web,
                        timeout_seconds=timeout_seconds, model=model, connections=connections,
                        files=files, outputs=outputs, zero_data_retention=zero_data_retention,
                        metadata=metadata, extra_body=extra_body)
        request = create_request(body, idempotency_key, stream)
        if not stream:
            return Run.from_dict(await self._t.json(request))
        request.timeout = self._t.stream_timeout()
        response = await self._t.send(request)
        return self._stream(id_from_location(response), response=response)

    async def get(self, run_id: str) -> Run:
        return Run.from_dict(await self._t.json(Request("GET", f"/v1/runs/{quote_id(run_id)}")))

    async def list(self, *, limit: int | None = None, before: str | None = None) -> Page[Run]:
        data = await self._t.json(Request("GET", "/v1/runs", params=list_params(limit, before)))
        return Page([Run.from_dict(r) for r in data.get("data", [])],
                    bool(data.get("has_more")), data.get("next_before"))

    async def iter(self, *, page_size: int | None = None,
                   before: str | None = None) -> AsyncIterator[Run]:
        while True:
            page = await self.list(limit=page_size, before=before)
            for run in page.data:
                yield run
            if not page.has_more or not page.next_before:
                return
            before = page.next_before

    async def cancel(self, run_id: str) -> Run:
        try:
            data = await self._t.json(Request("POST", f"/v1/runs/{quote_id(run_id)}/cancel"))
            return Run.from_dict(data)
        except RunFinished as exc:
            if exc.attempts > 1:
                return await self.get(run_id)
            raise

    def events(self, run_id: str, *, after: int = 0) -> AsyncEventStream:
        return self._stream(run_id, after=after)

    async def wait(self, run_id: str, *, timeout: float | None = None) -> Run:
        deadline = None if timeout is None else time.monotonic() + timeout
        async with self._stream(run_id, deadline=deadline) as events:
            async for _ in events:
                pass
        return await self.get(run_id)

    def _stream(self, run_id: str, *, after: int = 0, response: httpx.Response | None = None,
                deadline: float | None = None) -> AsyncEventStream:
        async def finished() -> bool:
            return (await self.get(run_id)).done

        return AsyncEventStream(self._t, f"/v1/runs/{quote_id(run_id)}/events", resource_id=run_id,
                                finished=finished, after=after, response=response, deadline=deadline)
