"""Exceptions: every problem+json answer becomes a typed exception.

The server answers every error as RFC 9457 ``application/problem+json``;
callers want to branch on *what* went wrong (``except InsufficientFunds``)
rather than on numbers, so each problem type maps to its own class. The
mapping is by the problem's ``type`` slug first (the contract's stable
name) and by HTTP status only as a fallback, so a status that moves (the
docs and the server disagree on 400 vs 422 for ``validation-failed``) does
not change which exception a caller gets.

No exception ever carries the API key: messages are built from the
problem's own fields and the request's method and path only.
"""

from __future__ import annotations

import builtins
import email.utils
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "APIError",
    "CommandError",
    "ConfigurationError",
    "Conflict",
    "ConnectionError",
    "EphemeralError",
    "FieldError",
    "IdempotencyKeyInUse",
    "IdempotencyKeyReused",
    "InsufficientFunds",
    "IntegrityError",
    "InvalidRequest",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "RunFinished",
    "SandboxEnded",
    "ServerError",
    "ShuttingDown",
    "TimeoutError",
    "Unauthorized",
]

# A non-problem error body (a proxy's HTML page) is quoted at most this long.
_MAX_QUOTED_BODY = 200


class EphemeralError(Exception):
    """Base of every exception this SDK raises on purpose."""


class ConfigurationError(EphemeralError, ValueError):
    """The client was not told where the server is or which key to use."""


class ConnectionError(EphemeralError, builtins.ConnectionError):
    """The server could not be reached, or the connection broke.

    Also a builtin ``ConnectionError``, so generic handlers catch it too.
    """


class TimeoutError(EphemeralError, builtins.TimeoutError):
    """A request, or a wait the caller bounded, took longer than allowed."""


class IntegrityError(EphemeralError):
    """Downloaded bytes do not match the checksum the server announced."""


class CommandError(EphemeralError):
    """A streamed command's ``exit`` event carried an error instead of a result
    (the sandbox ended under the command, or failed). Not retried."""


@dataclass(frozen=True)
class FieldError:
    """One field at fault in a request (the problem's ``errors`` entries)."""

    field: str
    message: str


class APIError(EphemeralError):
    """The server answered with an error (problem+json).

    Attributes mirror the problem document: ``status``, ``type`` (e.g.
    ``/problems/not-found``), ``title``, ``detail`` and ``errors``.
    ``attempts`` is how many requests were sent before giving up (more than
    one when retries happened).
    """

    def __init__(
        self,
        status: int,
        type: str,
        title: str,
        detail: str,
        errors: Sequence[FieldError] = (),
        *,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        self.status = status
        self.type = type
        self.title = title
        self.detail = detail
        self.errors: list[FieldError] = list(errors)
        self.retry_after = retry_after
        self.attempts = attempts
        super().__init__(self._message())

    @property
    def slug(self) -> str:
        """The problem type's last segment, e.g. ``insufficient-funds``."""
        return self.type.rstrip("/").rsplit("/", 1)[-1]

    def _message(self) -> str:
        text = f"{self.status} {self.title}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, type={self.type!r}, detail={self.detail!r})"


class InvalidRequest(APIError):
    """The request was malformed or a value was out of range (400 or 422)."""

    @property
    def field(self) -> str | None:
        """The first field at fault, when the server named one."""
        return self.errors[0].field if self.errors else None


class Unauthorized(APIError):
    """Missing or invalid API key (401)."""


class InsufficientFunds(APIError):
    """The organisation's free balance is below ``max_cost_micros`` (402)."""


class NotFound(APIError):
    """No such resource for this organisation (404)."""


class Conflict(APIError):
    """The request conflicts with the resource's state (409)."""


class IdempotencyKeyInUse(Conflict):
    """A request with the same Idempotency-Key is still being created (409)."""


class RunFinished(Conflict):
    """The run has already ended, so it cannot be cancelled (409)."""


class SandboxEnded(Conflict):
    """The sandbox has ended and takes no more commands or files (409)."""


class PayloadTooLarge(APIError):
    """The body, or a file, is over its limit (413)."""


class IdempotencyKeyReused(APIError):
    """An Idempotency-Key was reused with a different body (422)."""


class RateLimited(APIError):
    """Too many requests, or runs at once (429); see ``retry_after``."""


class ServerError(APIError):
    """The server failed (5xx)."""


class ShuttingDown(ServerError):
    """The node is draining before it stops (503); see ``retry_after``."""


_BY_SLUG: dict[str, type[APIError]] = {
    "invalid-json": InvalidRequest,
    "invalid-request": InvalidRequest,
    "validation-failed": InvalidRequest,
    "unauthorized": Unauthorized,
    "insufficient-funds": InsufficientFunds,
    "not-found": NotFound,
    "idempotency-key-in-use": IdempotencyKeyInUse,
    "run-finished": RunFinished,
    "sandbox-ended": SandboxEnded,
    "payload-too-large": PayloadTooLarge,
    "idempotency-key-reused": IdempotencyKeyReused,
    "rate-limited": RateLimited,
    "too-many-runs": RateLimited,
    "internal": ServerError,
    "shutting-down": ShuttingDown,
}

_BY_STATUS: dict[int, type[APIError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    402: InsufficientFunds,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidRequest,
    429: RateLimited,
}


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or an HTTP date)."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def _class_for(slug: str, status: int) -> type[APIError]:
    if slug in _BY_SLUG:
        return _BY_SLUG[slug]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else APIError


def _field_errors(value: Any) -> list[FieldError]:
    if not isinstance(value, list):
        return []
    return [
        FieldError(str(e.get("field", "")), str(e.get("message", "")))
        for e in value
        if isinstance(e, Mapping)
    ]


def _problem_document(body: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def error_from_response(
    status: int,
    reason: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    attempts: int = 1,
) -> APIError:
    """Builds the typed exception for an error response.

    A body that is not a problem document (a proxy's page, say) still gives
    an exception of the status's class, with a short quote of the body.
    """
    doc = _problem_document(body) or {}
    problem_type = str(doc.get("type") or f"/problems/http-{status}")
    title = str(doc.get("title") or reason or "HTTP error")
    if "detail" in doc:
        detail = str(doc.get("detail") or "")
    else:
        detail = body[:_MAX_QUOTED_BODY].decode("utf-8", "replace").strip()
    slug = problem_type.rstrip("/").rsplit("/", 1)[-1]
    cls = _class_for(slug, status)
    return cls(
        status,
        problem_type,
        title,
        detail,
        _field_errors(doc.get("errors")),
        retry_after=parse_retry_after(headers.get("retry-after")),
        attempts=attempts,
    )
