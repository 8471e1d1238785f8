"""``client.models``: the server's model catalogue."""

from __future__ import annotations

import builtins

from ._http import AsyncTransport, Request, SyncTransport
from .types import Model

__all__ = ["AsyncModels", "Models"]


class Models:
    """``client.models``."""

    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport

    def list(self) -> builtins.list[Model]:
        """The catalogue: ids, providers, prices per million tokens, and the default."""
        data = self._t.json(Request("GET", "/v1/models"))
        return [Model.from_dict(m) for m in data.get("data", [])]


class AsyncModels:
    """The async twin of :class:`Models`."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def list(self) -> builtins.list[Model]:
        data = await self._t.json(Request("GET", "/v1/models"))
        return [Model.from_dict(m) for m in data.get("data", [])]
