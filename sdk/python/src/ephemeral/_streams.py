"""Event streams that survive dropped connections, and raw byte streams.

A run's or a sandbox's timeline ends with ``worker.destroyed``; until that
event arrives, a stream that ends or breaks is reopened with
``Last-Event-ID`` set to the last event yielded, after the server's
``retry:`` delay. Events at or below that id are dropped, so a caller sees
each event exactly once, in order, whatever the network did. A connection
that brings nothing new counts against ``max_retries``; one that does
resets the count, so a long run survives any number of isolated drops.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from types import TracebackType

import httpx

from ._errors import ConnectionError, TimeoutError
from ._http import AsyncTransport, Request, SyncTransport, with_read_timeout
from ._sse import LineSplitter, ServerSentEvent, SSEDecoder
from .types import LAST_EVENT_TYPE, Event

__all__ = ["AsyncByteStream", "AsyncEventStream", "ByteStream", "EventStream"]

DEFAULT_RETRY_MS = 2000
MAX_RETRY_MS = 30_000


def to_event(sse: ServerSentEvent) -> Event:
    """An SSE event as an :class:`Event`: ``id`` an int (0 if none), ``data`` parsed JSON."""
    try:
        seq = int(sse.id) if sse.id is not None else 0
    except ValueError:
        seq = 0
    try:
        data = json.loads(sse.data)
    except ValueError:
        data = {"data": sse.data}
    return Event(seq, sse.event, data if isinstance(data, dict) else {"data": data})


class _Reader:
    """Parses one connection's bytes into events."""

    def __init__(self) -> None:
        self.splitter = LineSplitter()
        self.decoder = SSEDecoder()

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        out = []
        for line in self.splitter.feed(chunk):
            sse = self.decoder.decode(line)
            if sse is not None:
                out.append(sse)
        return out


class _StreamState:
    """What both stream classes track: position, reconnect budget and deadline."""

    def __init__(self, path: str, resource_id: str, after: int, max_retries: int,
                 deadline: float | None) -> None:
        self.id = resource_id
        self.last_event_id = after
        self._path = path
        self._max_quiet = max_retries
        self._deadline = deadline
        self._retry_ms = DEFAULT_RETRY_MS
        self._quiet = 0
        # The current connection was opened knowing the resource had ended.
        self._ended = False

    def _is_new(self, event: Event) -> bool:
        """Records the event's id; False for one already yielded."""
        if event.id <= 0:
            return True  # no id to order it by: nothing to deduplicate against
        if event.id <= self.last_event_id:
            return False
        self.last_event_id = event.id
        return True

    def _remaining(self) -> float | None:
        return None if self._deadline is None else self._deadline - time.monotonic()

    def _check_deadline(self) -> None:
        remaining = self._remaining()
        if remaining is not None and remaining <= 0:
            raise TimeoutError(f"the events of {self.id} did not end in time")

    def _request(self, transport: SyncTransport | AsyncTransport) -> Request:
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id > 0:
            headers["Last-Event-ID"] = str(self.last_event_id)
        timeout = transport.stream_timeout()
        remaining = self._remaining()
        if remaining is not None:
            limit = remaining if timeout.read is None else min(timeout.read, remaining)
            timeout = with_read_timeout(timeout, max(0.05, limit))
        return Request("GET", self._path, headers=headers, stream=True, timeout=timeout)

    def _reconnect_delay(self, progressed: bool, failure: BaseException | None,
                         retry_ms: int | None) -> float:
        """Seconds to wait before reopening; raises when the stream should give up."""
        self._check_deadline()
        self._quiet = 0 if progressed else self._quiet + 1
        if self._quiet > self._max_quiet:
            reason = f": {failure}" if failure else ""
            raise ConnectionError(
                f"the event stream of {self.id} kept ending before its last event "
                f"(after event {self.last_event_id}){reason}"
            ) from failure
        if retry_ms is not None:
            self._retry_ms = min(retry_ms, MAX_RETRY_MS)
        delay = self._retry_ms / 1000
        remaining = self._remaining()
        return delay if remaining is None else max(0.0, min(delay, remaining))


class EventStream(_StreamState):
    """Iterator of a run's or sandbox's events, resuming after dropped connections.

    Use it in a ``with`` block (or call :meth:`close`) to release the
    connection when not reading it to the end. ``id`` is the run's or
    sandbox's id; ``last_event_id`` the id of the last event yielded.
    """

    def __init__(self, transport: SyncTransport, path: str, *, resource_id: str,
                 finished: Callable[[], bool], after: int = 0,
                 response: httpx.Response | None = None, deadline: float | None = None) -> None:
        super().__init__(path, resource_id, after, transport.max_retries, deadline)
        self._transport = transport
        self._finished = finished
        self._events = self._generate(response)

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        self._events.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _generate(self, response: httpx.Response | None) -> Generator[Event, None, None]:
        while True:
            if response is None:
                response = self._transport.send(self._request(self._transport))
            reader, progressed, failure = _Reader(), False, None
            try:
                for chunk in response.iter_bytes():
                    for sse in reader.feed(chunk):
                        event = to_event(sse)
                        if not self._is_new(event):
                            continue
                        progressed = True
                        yield event
                        if event.type == LAST_EVENT_TYPE:
                            return
                    self._check_deadline()
            except httpx.TransportError as exc:
                failure = exc
            finally:
                response.close()
            response = None
            if failure is None and not progressed:
                if self._ended:
                    return
                if self._finished():
                    self._ended = True
                    continue  # what this connection sends is all there is
            self._ended = False
            delay = self._reconnect_delay(progressed, failure, reader.decoder.retry_ms)
            self._transport.sleep(delay)


class AsyncEventStream(_StreamState):
    """The async twin of :class:`EventStream`: ``async for``, ``async with``, ``aclose``."""

    def __init__(self, transport: AsyncTransport, path: str, *, resource_id: str,
                 finished: Callable[[], Awaitable[bool]], after: int = 0,
                 response: httpx.Response | None = None, deadline: float | None = None) -> None:
        super().__init__(path, resource_id, after, transport.max_retries, deadline)
        self._transport = transport
        self._finished = finished
        self._events = self._generate(response)

    def __aiter__(self) -> AsyncEventStream:
        return self

    async def __anext__(self) -> Event:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        await self._events.aclose()

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    async def _generate(self, response: httpx.Response | None) -> AsyncGenerator[Event, None]:
        while True:
            if response is None:
                response = await self._transport.send(self._request(self._transport))
            reader, progressed, failure = _Reader(), False, None
            try:
                async for chunk in response.aiter_bytes():
                    for sse in reader.feed(chunk):
                        event = to_event(sse)
                        if not self._is_new(event):
                            continue
                        progressed = True
                        yield event
                        if event.type == LAST_EVENT_TYPE:
                            return
                    self._check_deadline()
            except httpx.TransportError as exc:
                failure = exc
            finally:
                await response.aclose()
            response = None
            if failure is None and not progressed:
                if self._ended:
                    return
                if await self._finished():
                    self._ended = True
                    continue
            self._ended = False
            delay = self._reconnect_delay(progressed, failure, reader.decoder.retry_ms)
            await self._transport.sleep(delay)


class ByteStream:
    """A download's bytes, chunk by chunk; closes its connection when done."""

    def __init__(self, response: httpx.Response, chunk_size: int | None = None) -> None:
        self._response = response
        self._chunk_size = chunk_size

    @property
    def headers(self) -> httpx.Headers:
        return self._response.headers

    @property
    def content_length(self) -> int | None:
        value = self._response.headers.get("content-length")
        return int(value) if value and value.isdigit() else None

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._response.iter_bytes(self._chunk_size)
        except httpx.TransportError as exc:
            raise ConnectionError(f"the download broke off: {exc}") from exc
        finally:
            self._response.close()

    def close(self) -> None:
        self._response.close()

    def __enter__(self) -> ByteStream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class AsyncByteStream:
    """The async twin of :class:`ByteStream`."""

    def __init__(self, response: httpx.Response, chunk_size: int | None = None) -> None:
        self._response = response
        self._chunk_size = chunk_size

    @property
    def headers(self) -> httpx.Headers:
        return self._response.headers

    @property
    def content_length(self) -> int | None:
        value = self._response.headers.get("content-length")
        return int(value) if value and value.isdigit() else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_bytes(self._chunk_size):
                yield chunk
        except httpx.TransportError as exc:
            raise ConnectionError(f"the download broke off: {exc}") from exc
        finally:
            await self._response.aclose()

    async def aclose(self) -> None:
        await self._response.aclose()

    async def __aenter__(self) -> AsyncByteStream:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
