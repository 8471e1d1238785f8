"""``Client`` and ``AsyncClient``: the two entry points, with one surface."""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any

import httpx

from ._errors import ConfigurationError
from ._http import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    AsyncTransport,
    Request,
    SyncTransport,
    TimeoutTypes,
)
from ._models import AsyncModels, Models
from ._runs import AsyncRuns, Runs
from ._sandboxes import AsyncSandboxes, Sandboxes

__all__ = ["AsyncClient", "Client"]

ENV_URL = "EPHEMERAL_URL"
ENV_API_KEY = "EPHEMERAL_API_KEY"


def resolve_settings(base_url: str | None, api_key: str | None) -> tuple[str, str]:
    """The server's URL and the key, from the arguments or the environment.

    Both are needed for every call, so a missing one fails here, naming
    the argument and the variable, rather than as a 401 or a refused
    connection later.
    """
    url = base_url or os.environ.get(ENV_URL, "").strip()
    key = api_key or os.environ.get(ENV_API_KEY, "").strip()
    missing = []
    if not url:
        missing.append(f"the server's URL (pass base_url= or set {ENV_URL})")
    if not key:
        missing.append(f"an API key (pass api_key= or set {ENV_API_KEY})")
    if missing:
        raise ConfigurationError("Ephemeral client needs " + " and ".join(missing))
    if not url.startswith(("http://", "https://")):
        raise ConfigurationError(f"base_url must start with http:// or https://, got {url!r}")
    return url, key


class Client:
    """The synchronous client.

    ``Client()`` reads ``EPHEMERAL_URL`` and ``EPHEMERAL_API_KEY``.
    ``timeout`` (seconds, or an ``httpx.Timeout``) bounds each request;
    event streams wait at least 45 s between reads since idle streams get
    a keep-alive every 15 s. ``max_retries`` bounds the retries of one
    call. Close it (or use ``with``) to release its connections.
    """

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: TimeoutTypes = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_MAX_RETRIES,
                 http_client: httpx.Client | None = None) -> None:
        url, key = resolve_settings(base_url, api_key)
        self._transport = SyncTransport(url, key, timeout, max_retries, http_client)
        self.runs = Runs(self._transport)
        self.sandboxes = Sandboxes(self._transport)
        self.models = Models(self._transport)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def max_retries(self) -> int:
        return self._transport.max_retries

    def __repr__(self) -> str:
        return f"<ephemeral.Client {self._transport._display}>"

    def health(self) -> dict[str, Any]:
        """``GET /v1/health``: whether the node is up, its store and isolation."""
        data: dict[str, Any] = self._transport.json(Request("GET", "/v1/health"))
        return data

    def runtime(self) -> dict[str, Any]:
        """``GET /v1/runtime``: what a sandbox offers (limits, programs, python, node)."""
        data: dict[str, Any] = self._transport.json(Request("GET", "/v1/runtime"))
        return data

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class AsyncClient:
    """The asynchronous client: the same surface as :class:`Client`, awaited."""

    def __init__(self, base_url: str | None = None, api_key: str | None = None, *,
                 timeout: TimeoutTypes = DEFAULT_TIMEOUT, max_retries: int = DEFAULT_MAX_RETRIES,
                 http_client: httpx.AsyncClient | None = None) -> None:
        url, key = resolve_settings(base_url, api_key)
        self._transport = AsyncTransport(url, key, timeout, max_retries, http_client)
        self.runs = AsyncRuns(self._transport)
        self.sandboxes = AsyncSandboxes(self._transport)
        self.models = AsyncModels(self._transport)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def max_retries(self) -> int:
        return self._transport.max_retries

    def __repr__(self) -> str:
        return f"<ephemeral.AsyncClient {self._transport._display}>"

    async def health(self) -> dict[str, Any]:
        data: dict[str, Any] = await self._transport.json(Request("GET", "/v1/health"))
        return data

    async def runtime(self) -> dict[str, Any]:
        data: dict[str, Any] = await self._transport.json(Request("GET", "/v1/runtime"))
        return data

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()
