"""Fixtures: one real server per session, clients on it, a fault proxy."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from support import FaultProxy, Server, remove_tree, start_server

import ephemeral

# A budget every test run can afford many times over (the org has $100).
BUDGET = 200_000


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("ephemeral-server")
    srv = start_server(data_dir)
    try:
        yield srv
    finally:
        srv.stop()
        remove_tree(data_dir)


@pytest.fixture
def client(server: Server) -> Iterator[ephemeral.Client]:
    with ephemeral.Client(server.url, server.key, timeout=30) as c:
        yield c


@pytest.fixture
async def aclient(server: Server) -> AsyncIterator[ephemeral.AsyncClient]:
    async with ephemeral.AsyncClient(server.url, server.key, timeout=30) as c:
        yield c


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tag() -> dict[str, str]:
    """Metadata that marks this test's runs and sandboxes, to count them later."""
    return {"test": uuid.uuid4().hex}


@pytest.fixture
def proxy(server: Server) -> Iterator[FaultProxy]:
    with FaultProxy(server.url) as p:
        yield p
