"""Server-Sent Events, parsed as the HTML standard says.

Lines end at CR, LF or CRLF and nowhere else: httpx's ``iter_lines`` also
splits at U+2028, form feeds and the like (``str.splitlines``), which would
cut a command's output that contains them, so lines are split here from the
raw bytes. An event is dispatched at a blank line only, so an event cut off
by a dropped connection is never seen half.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: ``event`` defaults to ``message``; ``id`` is the last id seen."""

    event: str
    data: str
    id: str | None


class LineSplitter:
    """Splits a byte stream into lines at CR, LF or CRLF, across chunk boundaries."""

    def __init__(self) -> None:
        self._buffer = b""
        # The last chunk ended in CR: an LF starting the next one belongs to it.
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[str]:
        if self._pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._pending_cr = False
        data = self._buffer + chunk
        lines: list[str] = []
        start = 0
        for match in _LINE_END.finditer(data):
            lines.append(data[start : match.start()].decode("utf-8", "replace"))
            start = match.end()
        if data.endswith(b"\r"):
            self._pending_cr = True
        self._buffer = data[start:]
        return lines


class SSEDecoder:
    """Turns lines into events; ``retry_ms`` holds the server's reconnection hint."""

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._first_line = True
        self.retry_ms: int | None = None

    def decode(self, line: str) -> ServerSentEvent | None:
        """Feeds one line; returns an event when this line completes one."""
        if self._first_line:
            self._first_line = False
            line = line.removeprefix("\ufeff")
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: keeps an idle stream alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return ServerSentEvent(event=event or "message", data="\n".join(data), id=self._last_id)


def decode_all(payload: bytes) -> list[ServerSentEvent]:
    """Every complete event of a whole payload (for tests and small bodies)."""
    splitter, decoder = LineSplitter(), SSEDecoder()
    events = []
    for line in splitter.feed(payload):
        event = decoder.decode(line)
        if event is not None:
            events.append(event)
    return events
