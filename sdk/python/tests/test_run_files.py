"""Files a run leaves behind (`outputs`). Marker: files."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path, PurePosixPath

import pytest
from conftest import BUDGET

import ephemeral
from ephemeral import Client

pytestmark = pytest.mark.files

PROMPT = "\n".join([
    "mkdir -p out/sub",
    "printf 'hello report' > report.txt",
    "seq 1 5000 > out/sub/data.csv",
    "echo not collected > ignored.log",
])


def collected_run(client: Client) -> ephemeral.Run:
    run = client.runs.create(PROMPT, max_cost_micros=BUDGET, outputs=["*.txt", "out/**"])
    return client.runs.wait(run.id, timeout=60)


def test_outputs_are_listed_and_announced(client: Client) -> None:
    run = collected_run(client)
    assert run.succeeded and run.timeline is not None
    types = [e.type for e in run.timeline]
    assert types.index("files.collected") < types.index("vm.destroyed")
    announced = next(e for e in run.timeline if e.type == "files.collected").data
    assert announced["skipped"] == []
    files = client.runs.files.list(run.id)
    names = {PurePosixPath(f.path).name: f for f in files}
    assert set(names) == {"report.txt", "data.csv"}
    report = names["report.txt"]
    assert report.size == len(b"hello report")
    assert report.sha256 == hashlib.sha256(b"hello report").hexdigest()
    assert report.content_type.startswith("text/")
    assert {(f["path"], f["sha256"]) for f in announced["files"]} == {(f.path, f.sha256) for f in files}


def test_download_to_a_folder_a_path_and_a_file_object(client: Client, tmp_path: Path) -> None:
    run = collected_run(client)
    files = {PurePosixPath(f.path).name: f for f in client.runs.files.list(run.id)}
    data = files["data.csv"]
    expected = "".join(f"{n}\n" for n in range(1, 5001)).encode()

    into_folder = client.runs.files.download(run.id, data.path, to=tmp_path)
    assert into_folder == tmp_path / "data.csv" and into_folder.read_bytes() == expected
    nested = client.runs.files.download(run.id, data.path, to=tmp_path / "a" / "b" / "copy.csv")
    assert nested.read_bytes() == expected
    buffer = io.BytesIO()
    assert client.runs.files.download(run.id, data.path, to=buffer) is None
    assert buffer.getvalue() == expected
    assert client.runs.files.read(run.id, files["report.txt"].path) == b"hello report"
    assert not [p for p in tmp_path.rglob("*.part")]


def test_a_path_not_collected_is_404(client: Client, tmp_path: Path) -> None:
    run = collected_run(client)
    with pytest.raises(ephemeral.NotFound):
        client.runs.files.download(run.id, "ignored.log", to=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_run_without_outputs_has_no_files(client: Client) -> None:
    run = client.runs.wait(client.runs.create("echo x > a.txt", max_cost_micros=BUDGET).id, timeout=60)
    assert client.runs.files.list(run.id) == []


@pytest.mark.anyio
async def test_async_files(aclient: ephemeral.AsyncClient, tmp_path: Path) -> None:
    run = await aclient.runs.create(PROMPT, max_cost_micros=BUDGET, outputs=["report.txt"])
    await aclient.runs.wait(run.id, timeout=60)
    (report,) = await aclient.runs.files.list(run.id)
    path = await aclient.runs.files.download(run.id, report.path, to=tmp_path)
    assert path.read_bytes() == b"hello report"
    assert await aclient.runs.files.read(run.id, report.path) == b"hello report"
