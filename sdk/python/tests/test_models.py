"""The model catalogue. Marker: models."""

from __future__ import annotations

import pytest

import ephemeral

pytestmark = pytest.mark.models


def test_the_catalogue_lists_the_built_in_models(client: ephemeral.Client) -> None:
    models = {m.id: m for m in client.models.list()}
    assert {"ephemeral/script", "openai/gpt-6-luna"} <= set(models)
    assert all(m.provider for m in models.values())
    assert all(m.input_micros_per_million >= 0 and m.output_micros_per_million >= 0
               for m in models.values())
    defaults = [m.id for m in models.values() if m.default]
    assert defaults == ["ephemeral/script"]  # the test server's default_model


@pytest.mark.anyio
async def test_async_catalogue(aclient: ephemeral.AsyncClient) -> None:
    assert "ephemeral/script" in [m.id for m in await aclient.models.list()]
