"""Sending requests: auth, timeouts, typed errors and retries, sync and async.

One policy for both clients: a request is retried (at most ``max_retries``
times, with exponential backoff, or after exactly ``Retry-After`` when the
server says) on 429, on 5xx and on a broken connection, but only when
sending it twice cannot do a thing twice. GETs, PUTs and DELETEs qualify;
a create qualifies because it carries an ``Idempotency-Key`` reused by every
retry (the server answers a repeat with the first answer); a command never
does, since running ``rm`` or ``make deploy`` twice is not what anyone asked.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import AsyncIterable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from ._errors import (
    APIError,
    ConnectionError,
    EphemeralError,
    IdempotencyKeyInUse,
    TimeoutError,
    error_from_response,
)
from ._version import __version__

logger = logging.getLogger("ephemeral")

DEFAULT_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_RETRIES = 2
# Event streams send a comment every 15 s when idle: a read timeout below
# that would break healthy streams, so streams wait at least this long.
MIN_STREAM_READ_TIMEOUT = 45.0
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0
# A server asking for a longer wait than this gets the error back instead:
# the caller, not the SDK, should decide to sleep for minutes.
MAX_RETRY_AFTER = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

Body = bytes | Iterable[bytes] | AsyncIterable[bytes] | None
TimeoutTypes = float | httpx.Timeout | None


@dataclass
class Request:
    """One API request as the resources describe it, before it is sent."""

    method: str
    path: str
    params: Mapping[str, str | int] | None = None
    json: Any = None
    content: Body = None
    headers: dict[str, str] = field(default_factory=dict)
    # False: never sent twice (commands, one-shot upload streams). A body
    # that is sent twice must be re-iterable (see _bodies.py).
    retry: bool = True
    timeout: httpx.Timeout | None = None
    stream: bool = False

    def describe(self) -> str:
        return f"{self.method} {self.path}"


def make_timeout(value: TimeoutTypes) -> httpx.Timeout:
    """A float is the whole budget of one request; connecting gets at most 10 s of it."""
    if isinstance(value, httpx.Timeout):
        return value
    if value is None:
        return httpx.Timeout(None, connect=DEFAULT_CONNECT_TIMEOUT)
    return httpx.Timeout(value, connect=min(value, DEFAULT_CONNECT_TIMEOUT))


def with_read_timeout(timeout: httpx.Timeout, read: float | None) -> httpx.Timeout:
    return httpx.Timeout(connect=timeout.connect, read=read, write=timeout.write, pool=timeout.pool)


def backoff_delay(attempt: int, retry_after: float | None) -> float | None:
    """Seconds before retry number ``attempt`` (from 1), or None not to retry."""
    if retry_after is not None:
        return retry_after if retry_after <= MAX_RETRY_AFTER else None
    base = min(MAX_BACKOFF, INITIAL_BACKOFF * 2.0 ** (attempt - 1))
    return base * random.uniform(0.75, 1.25)


def _status_is_retryable(request: Request, error: APIError) -> bool:
    if error.status in RETRY_STATUSES:
        return True
    # The first attempt of a create is still being made: the answer comes soon.
    return isinstance(error, IdempotencyKeyInUse) and "Idempotency-Key" in request.headers


def translate_transport_error(exc: httpx.TransportError, where: str, base_url: str) -> EphemeralError:
    """httpx's exception as the SDK's own, naming the request but no header."""
    if isinstance(exc, httpx.TimeoutException):
        return TimeoutError(f"{where}: timed out ({type(exc).__name__}) talking to {base_url}")
    reason = str(exc) or type(exc).__name__
    return ConnectionError(f"{where}: connection to {base_url} failed: {reason}")


def _json_body(value: Any) -> bytes:
    # Serialised once, so every retry sends the very same bytes (the server
    # compares a repeated Idempotency-Key's body with the first one's).
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def parse_json(response: httpx.Response, where: str) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise EphemeralError(f"{where}: the server's answer is not JSON") from exc


def _display_url(base_url: str) -> str:
    url = httpx.URL(base_url)
    return str(url.copy_with(username=None, password=None, query=None, fragment=None))


class _TransportBase:
    """What both transports share: URLs, headers, and the retry decisions."""

    def __init__(self, base_url: str, api_key: str, timeout: TimeoutTypes, max_retries: int) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.base_url = base_url.rstrip("/")
        self._display = _display_url(self.base_url)
        self._api_key = api_key
        self.timeout = make_timeout(timeout)
        self.max_retries = max_retries

    def __repr__(self) -> str:  # never the key
        return f"<{type(self).__name__} {self._display}>"

    def stream_timeout(self, read: float | None = None) -> httpx.Timeout:
        """The timeout of an event stream: reads wait past the keep-alive comments."""
        current = self.timeout.read
        floor = MIN_STREAM_READ_TIMEOUT if read is None else read
        value = None if current is None else max(current, floor)
        return with_read_timeout(self.timeout, value)

    def _headers(self, request: Request) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self._api_key}",
            "User-Agent": f"ephemeral-sdk-python/{__version__}",
            "Accept": "application/json",
        }
        if request.json is not None:
            headers["Content-Type"] = "application/json"
        headers.update(request.headers)
        return headers

    def _content(self, request: Request) -> Body:
        return _json_body(request.json) if request.json is not None else request.content

    def _error(self, response: httpx.Response, attempt: int) -> APIError:
        return error_from_response(
            response.status_code, response.reason_phrase, response.headers, response.content,
            attempts=attempt,
        )

    def _may_retry(self, request: Request, attempt: int) -> bool:
        return request.retry and attempt <= self.max_retries

    def _delay_after_error(self, request: Request, attempt: int, error: APIError) -> float | None:
        if not (self._may_retry(request, attempt) and _status_is_retryable(request, error)):
            return None
        return backoff_delay(attempt, error.retry_after)

    def _delay_after_failure(self, request: Request, attempt: int) -> float | None:
        return backoff_delay(attempt, None) if self._may_retry(request, attempt) else None

    def _log_retry(self, request: Request, attempt: int, delay: float, why: str) -> None:
        logger.info("retrying %s in %.2fs after %s (retry %d of %d)",
                    request.describe(), delay, why, attempt, self.max_retries)

    def _fail(self, request: Request, exc: httpx.TransportError) -> EphemeralError:
        return translate_transport_error(exc, request.describe(), self._display)


class SyncTransport(_TransportBase):
    """Sends requests with an ``httpx.Client``, retrying as the policy allows."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        timeout: TimeoutTypes,
        max_retries: int,
        http_client: httpx.Client | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout, max_retries)
        self._owns_client = http_client is None
        self._client = http_client or httpx.Client(timeout=self.timeout)
        self.sleep: Callable[[float], None] = time.sleep

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def send(self, request: Request) -> httpx.Response:
        """The response of the first attempt that succeeds; else the typed error."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._send_once(request)
            except httpx.TransportError as exc:
                delay = self._delay_after_failure(request, attempt)
                if delay is None:
                    raise self._fail(request, exc) from exc
                why = type(exc).__name__
            else:
                if response.status_code < 400:
                    return response
                error = self._read_error(response, attempt)
                delay = self._delay_after_error(request, attempt, error)
                if delay is None:
                    raise error
                why = f"{error.status} {error.slug}"
            self._log_retry(request, attempt, delay, why)
            self.sleep(delay)

    def json(self, request: Request) -> Any:
        return parse_json(self.send(request), request.describe())

    def _send_once(self, request: Request) -> httpx.Response:
        built = self._client.build_request(
            request.method,
            self.base_url + request.path,
            params=request.params,
            content=self._content(request),
            headers=self._headers(request),
            timeout=request.timeout or self.timeout,
        )
        return self._client.send(built, stream=request.stream)

    def _read_error(self, response: httpx.Response, attempt: int) -> APIError:
        try:
            response.read()
        except httpx.TransportError:
            pass  # the status alone still says what went wrong
        finally:
            response.close()
        return self._error(response, attempt)


class AsyncTransport(_TransportBase):
    """The same as :class:`SyncTransport`, with an ``httpx.AsyncClient``."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        timeout: TimeoutTypes,
        max_retries: int,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(base_url, api_key, timeout, max_retries)
        self._owns_client = http_client is None
        self._client = http_client or httpx.AsyncClient(timeout=self.timeout)
        self.sleep: Callable[[float], Any] = anyio.sleep

    async def close(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def send(self, request: Request) -> httpx.Response:
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._send_once(request)
            except httpx.TransportError as exc:
                delay = self._delay_after_failure(request, attempt)
                if delay is None:
                    raise self._fail(request, exc) from exc
                why = type(exc).__name__
            else:
                if response.status_code < 400:
                    return response
                error = await self._read_error(response, attempt)
                delay = self._delay_after_error(request, attempt, error)
                if delay is None:
                    raise error
                why = f"{error.status} {error.slug}"
            self._log_retry(request, attempt, delay, why)
            await self.sleep(delay)

    async def json(self, request: Request) -> Any:
        return parse_json(await self.send(request), request.describe())

    async def _send_once(self, request: Request) -> httpx.Response:
        built = self._client.build_request(
            request.method,
            self.base_url + request.path,
            params=request.params,
            content=self._content(request),
            headers=self._headers(request),
            timeout=request.timeout or self.timeout,
        )
        return await self._client.send(built, stream=request.stream)

    async def _read_error(self, response: httpx.Response, attempt: int) -> APIError:
        try:
            await response.aread()
        except httpx.TransportError:
            pass
        finally:
            await response.aclose()
        return self._error(response, attempt)
