"""Constructing clients: settings from arguments or the environment."""

from __future__ import annotations

import pytest
from support import Server

import ephemeral


def test_neither_url_nor_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EPHEMERAL_URL", raising=False)
    monkeypatch.delenv("EPHEMERAL_API_KEY", raising=False)
    with pytest.raises(ephemeral.ConfigurationError) as info:
        ephemeral.Client()
    message = str(info.value)
    assert "EPHEMERAL_URL" in message and "EPHEMERAL_API_KEY" in message
    assert "base_url" in message and "api_key" in message
    with pytest.raises(ephemeral.ConfigurationError, match="EPHEMERAL_API_KEY"):
        ephemeral.AsyncClient("http://127.0.0.1:1")


def test_a_url_without_scheme_is_refused() -> None:
    with pytest.raises(ephemeral.ConfigurationError, match="http"):
        ephemeral.Client("127.0.0.1:8080", "k")


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, server: Server) -> None:
    monkeypatch.setenv("EPHEMERAL_URL", server.url + "/")
    monkeypatch.setenv("EPHEMERAL_API_KEY", server.key)
    with ephemeral.Client() as c:
        assert c.base_url == server.url
        assert c.health()["status"] == "ok"
        assert c.runs.list(limit=1).data is not None
        assert server.key not in repr(c)


def test_health_and_runtime(client: ephemeral.Client) -> None:
    health = client.health()
    assert health["status"] == "ok" and health["isolation"] == "wasm"
    runtime = client.runtime()
    assert runtime["network"] is False
    assert "sleep" in runtime["shell"]["utilities"]
    assert runtime["limits"]["command_timeout_seconds"] > 0


def test_an_unreachable_server_is_a_connection_error() -> None:
    from support import free_port

    with ephemeral.Client(f"http://127.0.0.1:{free_port()}", "k", max_retries=1, timeout=5) as c:
        c._transport.sleep = lambda _s: None
        with pytest.raises(ephemeral.ConnectionError) as info:
            c.runs.list()
    assert "GET /v1/runs" in str(info.value)
