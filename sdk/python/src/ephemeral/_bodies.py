"""Request bodies and paths: ``files`` fields, uploads, file paths in URLs.

Uploads are streamed in chunks, never read whole into memory. A body that
can be produced again (bytes, a path, a seekable file) is a re-iterable
object, so the transport may send it a second time on a retry; a one-shot
stream (a generator, a pipe) is marked as not retryable instead.
"""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import quote

import anyio.to_thread

CHUNK_SIZE = 64 * 1024

# `files` of a run or a sandbox: {path: text or bytes}, or the API's own
# list of {"path", "content"} / {"path", "content_base64"}.
FilesParam = Mapping[str, str | bytes] | Sequence[Mapping[str, str]]
# What `sandbox.files.write` takes.
UploadData = (str | bytes | bytearray | memoryview | os.PathLike[str] | IO[bytes]
              | Iterable[bytes] | AsyncIterable[bytes])


def files_payload(files: FilesParam) -> list[dict[str, str]]:
    """The ``files`` field as the API wants it; bytes travel base64-encoded."""
    if isinstance(files, Mapping):
        return [_file_entry(path, content) for path, content in files.items()]
    return [dict(entry) for entry in files]


def _file_entry(path: str, content: str | bytes) -> dict[str, str]:
    if isinstance(content, str):
        return {"path": path, "content": content}
    if isinstance(content, (bytes, bytearray, memoryview)):
        return {"path": path, "content_base64": base64.b64encode(bytes(content)).decode("ascii")}
    raise TypeError(f"files[{path!r}] must be str or bytes, not {type(content).__name__}")


def quote_segment(segment: str) -> str:
    """One URL path segment; ``.`` and ``..`` are escaped so that no URL
    normalisation (httpx's included) turns them into a walk up the path."""
    if segment in (".", ".."):
        return segment.replace(".", "%2E")
    return quote(segment, safe="")


def encode_file_path(path: str) -> str:
    """A sandbox or run file path as URL path segments.

    Slashes stay separators; a leading slash (an absolute path under /tmp)
    is sent as ``%2F`` so that no proxy folds the resulting ``//`` away;
    ``..`` reaches the server as such (which refuses it, naming ``path``)
    instead of silently addressing another endpoint.
    """
    if not path:
        raise ValueError("a file path must not be empty")
    if "\0" in path:
        raise ValueError("a file path must not contain NUL")
    absolute = path.startswith("/")
    encoded = "/".join(quote_segment(s) for s in path.lstrip("/").split("/")) if path.strip("/") else ""
    return "%2F" + encoded if absolute else encoded


@dataclass
class Upload:
    """A body ready to send: its content, its length if known, whether it can be resent."""

    content: Any
    length: int | None
    retryable: bool


class _PathBody:
    """A local file, opened afresh on each iteration (so a retry resends it whole)."""

    def __init__(self, path: os.PathLike[str]) -> None:
        self._path = os.fspath(path)

    def __iter__(self) -> Iterator[bytes]:
        with open(self._path, "rb") as f:
            while chunk := f.read(CHUNK_SIZE):
                yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        f = await anyio.to_thread.run_sync(open, self._path, "rb")
        try:
            while chunk := await anyio.to_thread.run_sync(f.read, CHUNK_SIZE):
                yield chunk
        finally:
            f.close()


class _FileObjectBody:
    """An open binary file; a seekable one is rewound to where it started on each iteration."""

    def __init__(self, f: IO[bytes]) -> None:
        self._file = f
        self._start = f.tell() if _seekable(f) else None

    def __iter__(self) -> Iterator[bytes]:
        if self._start is not None:
            self._file.seek(self._start)
        while chunk := self._file.read(CHUNK_SIZE):
            yield _as_bytes(chunk)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._start is not None:
            self._file.seek(self._start)
        while chunk := await anyio.to_thread.run_sync(self._file.read, CHUNK_SIZE):
            yield _as_bytes(chunk)


def _as_bytes(chunk: Any) -> bytes:
    if isinstance(chunk, str):
        raise TypeError("files.write needs a file opened in binary mode ('rb')")
    return bytes(chunk)


def _seekable(f: IO[bytes]) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def _remaining_size(f: IO[bytes]) -> int | None:
    if not _seekable(f):
        return None
    start = f.tell()
    end = f.seek(0, os.SEEK_END)
    f.seek(start)
    return end - start


def make_upload(data: UploadData) -> Upload:
    """Turns what the caller passed into a streamable, possibly resendable body."""
    if isinstance(data, str):
        encoded = data.encode("utf-8")
        return Upload(encoded, len(encoded), True)
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        return Upload(raw, len(raw), True)
    if isinstance(data, os.PathLike):
        return Upload(_PathBody(data), os.path.getsize(data), True)
    if hasattr(data, "read"):
        f: IO[bytes] = data  # type: ignore[assignment]
        return Upload(_FileObjectBody(f), _remaining_size(f), _seekable(f))
    if isinstance(data, (list, tuple)):
        return Upload(list(data), sum(len(c) for c in data), True)
    if isinstance(data, (Iterable, AsyncIterable)):
        return Upload(data, None, False)  # a one-shot stream: sent once, never retried
    raise TypeError(f"cannot upload a {type(data).__name__}: pass bytes, str, a path or a file")
