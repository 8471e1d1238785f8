"""The API's objects as frozen dataclasses.

Each object is parsed from the JSON the server sends, tolerantly: a field
the server adds later is kept in ``raw`` (and ignored otherwise), and a
field it leaves out gets a neutral default, so an SDK of today keeps working
against a server of tomorrow. Times become timezone-aware ``datetime``s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

__all__ = [
    "TERMINAL_RUN_STATUSES",
    "CommandResult",
    "ErrorInfo",
    "Event",
    "FileEntry",
    "Model",
    "Page",
    "Permissions",
    "Run",
    "RunCost",
    "RunFile",
    "RunStatus",
    "SandboxCost",
    "SandboxInfo",
    "SandboxLimits",
    "Usage",
    "WrittenFile",
]

RunStatus = Literal[
    "queued", "running", "succeeded", "failed", "timed_out", "budget_exceeded", "cancelled"
]
TERMINAL_RUN_STATUSES = frozenset(
    {"succeeded", "failed", "timed_out", "budget_exceeded", "cancelled"}
)
# The last event of every run's and sandbox's stream.
LAST_EVENT_TYPE = "worker.destroyed"

T = TypeVar("T")
Json = Mapping[str, Any]


def parse_time(value: Any) -> datetime | None:
    """RFC 3339 text to an aware datetime (Python 3.10 cannot read ``Z``)."""
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _int(d: Json, key: str, default: int = 0) -> int:
    value = d.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _opt_int(d: Json, key: str) -> int | None:
    value = d.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(d: Json, key: str, default: str = "") -> str:
    value = d.get(key)
    return value if isinstance(value, str) else default


def _opt_str(d: Json, key: str) -> str | None:
    value = d.get(key)
    return value if isinstance(value, str) else None


def _bool(d: Json, key: str, default: bool = False) -> bool:
    value = d.get(key)
    return value if isinstance(value, bool) else default


def _obj(d: Json, key: str) -> Json:
    value = d.get(key)
    return value if isinstance(value, Mapping) else {}


def _str_map(d: Json, key: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in _obj(d, key).items()}


def _str_list(d: Json, key: str) -> list[str]:
    value = d.get(key)
    return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(frozen=True)
class Event:
    """One event of a run's or a sandbox's timeline.

    ``id`` is its sequence number (from 1), ``type`` e.g. ``shell.output``,
    ``data`` the event's JSON object (always with ``at`` and ``t_ms``).
    """

    id: int
    type: str
    data: dict[str, Any]

    @property
    def seq(self) -> int:
        """The sequence number, as the timeline of ``GET /v1/runs/{id}`` names it."""
        return self.id

    @property
    def at(self) -> datetime | None:
        return parse_time(self.data.get("at"))

    @property
    def t_ms(self) -> int | None:
        return _opt_int(self.data, "t_ms")

    @classmethod
    def from_timeline(cls, d: Json) -> Event:
        data = d.get("data")
        return cls(_int(d, "seq"), _str(d, "type"), dict(data) if isinstance(data, Mapping) else {})


@dataclass(frozen=True)
class Permissions:
    shell: bool
    web: bool
    connections: list[str]
    files: list[str]
    timeout_seconds: int
    max_cost_micros: int
    zero_data_retention: bool

    @classmethod
    def from_dict(cls, d: Json) -> Permissions:
        return cls(
            shell=_bool(d, "shell", True),
            web=_bool(d, "web"),
            connections=_str_list(d, "connections"),
            files=_str_list(d, "files"),
            timeout_seconds=_int(d, "timeout_seconds"),
            max_cost_micros=_int(d, "max_cost_micros"),
            zero_data_retention=_bool(d, "zero_data_retention"),
        )


@dataclass(frozen=True)
class Usage:
    model_calls: int
    input_tokens: int
    output_tokens: int
    total_tokens: int

    @classmethod
    def from_dict(cls, d: Json) -> Usage:
        return cls(*(_int(d, k) for k in ("model_calls", "input_tokens", "output_tokens", "total_tokens")))


@dataclass(frozen=True)
class RunCost:
    """Money in micro-dollars: charged + released = reserved; model + web + compute = charged."""

    reserved_micros: int
    charged_micros: int
    released_micros: int
    model_micros: int
    web_micros: int
    compute_micros: int

    @classmethod
    def from_dict(cls, d: Json) -> RunCost:
        keys = ("reserved_micros", "charged_micros", "released_micros",
                "model_micros", "web_micros", "compute_micros")
        return cls(*(_int(d, k) for k in keys))


@dataclass(frozen=True)
class ErrorInfo:
    """Why a run failed: a machine-readable ``code`` and a sentence."""

    code: str
    message: str


@dataclass(frozen=True)
class Run:
    """A run: one prompt, one agent, one throwaway sandbox."""

    id: str
    status: str
    created_at: datetime | None
    started_at: datetime | None
    ended_at: datetime | None
    expires_at: datetime | None
    model: str
    isolation: str | None
    permissions: Permissions
    usage: Usage
    cost: RunCost
    output: str | None
    error: ErrorInfo | None
    metadata: dict[str, str]
    timeline: list[Event] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def done(self) -> bool:
        """True once the run has ended, whatever its outcome."""
        return self.status in TERMINAL_RUN_STATUSES

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"

    @classmethod
    def from_dict(cls, d: Json) -> Run:
        error = d.get("error")
        timeline = d.get("timeline")
        return cls(
            id=_str(d, "id"),
            status=_str(d, "status"),
            created_at=parse_time(d.get("created_at")),
            started_at=parse_time(d.get("started_at")),
            ended_at=parse_time(d.get("ended_at")),
            expires_at=parse_time(d.get("expires_at")),
            model=_str(d, "model"),
            isolation=_opt_str(d, "isolation"),
            permissions=Permissions.from_dict(_obj(d, "permissions")),
            usage=Usage.from_dict(_obj(d, "usage")),
            cost=RunCost.from_dict(_obj(d, "cost")),
            output=_opt_str(d, "output"),
            error=(
                ErrorInfo(_str(error, "code"), _str(error, "message"))
                if isinstance(error, Mapping)
                else None
            ),
            metadata=_str_map(d, "metadata"),
            timeline=(
                [Event.from_timeline(e) for e in timeline if isinstance(e, Mapping)]
                if isinstance(timeline, list)
                else None
            ),
            raw=dict(d),
        )


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list, newest first; pass ``next_before`` as ``before`` for the next."""

    data: list[T]
    has_more: bool
    next_before: str | None

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


@dataclass(frozen=True)
class RunFile:
    """A file a run left behind (its ``outputs``)."""

    path: str
    size: int
    sha256: str
    content_type: str

    @classmethod
    def from_dict(cls, d: Json) -> RunFile:
        return cls(_str(d, "path"), _int(d, "size"), _str(d, "sha256"),
                   _str(d, "content_type", "application/octet-stream"))


@dataclass(frozen=True)
class SandboxLimits:
    timeout_seconds: int | None
    idle_timeout_seconds: int | None
    command_timeout_seconds: int | None
    memory_bytes: int | None
    output_bytes: int | None
    disk_bytes: int | None
    disk_files: int | None

    @classmethod
    def from_dict(cls, d: Json) -> SandboxLimits:
        keys = ("timeout_seconds", "idle_timeout_seconds", "command_timeout_seconds",
                "memory_bytes", "output_bytes", "disk_bytes", "disk_files")
        return cls(*(_opt_int(d, k) for k in keys))


@dataclass(frozen=True)
class SandboxCost:
    """While running, ``compute_micros`` is metered so far; once ended, the settlement."""

    reserved_micros: int
    charged_micros: int
    released_micros: int
    compute_micros: int

    @classmethod
    def from_dict(cls, d: Json) -> SandboxCost:
        keys = ("reserved_micros", "charged_micros", "released_micros", "compute_micros")
        return cls(*(_int(d, k) for k in keys))


@dataclass(frozen=True)
class SandboxInfo:
    """The sandbox object: its state, limits and cost at the time it was read."""

    id: str
    status: str
    isolation: str | None
    created_at: datetime | None
    expires_at: datetime | None
    ended_at: datetime | None
    end_reason: str | None
    limits: SandboxLimits
    cost: SandboxCost
    metadata: dict[str, str]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def running(self) -> bool:
        return self.status == "running"

    @classmethod
    def from_dict(cls, d: Json) -> SandboxInfo:
        return cls(
            id=_str(d, "id"),
            status=_str(d, "status"),
            isolation=_opt_str(d, "isolation"),
            created_at=parse_time(d.get("created_at")),
            expires_at=parse_time(d.get("expires_at")),
            ended_at=parse_time(d.get("ended_at")),
            end_reason=_opt_str(d, "end_reason"),
            limits=SandboxLimits.from_dict(_obj(d, "limits")),
            cost=SandboxCost.from_dict(_obj(d, "cost")),
            metadata=_str_map(d, "metadata"),
            raw=dict(d),
        )


@dataclass(frozen=True)
class CommandResult:
    """What one command did. ``limit`` names the limit it hit, if any."""

    exit_code: int
    stdout: str
    stderr: str
    duration_ms: int
    truncated: bool
    limit: str | None

    @property
    def ok(self) -> bool:
        """Exited 0 and hit no limit."""
        return self.exit_code == 0 and self.limit is None

    @classmethod
    def from_dict(cls, d: Json, stdout: str | None = None, stderr: str | None = None) -> CommandResult:
        return cls(
            exit_code=_int(d, "exit_code", -1),
            stdout=_str(d, "stdout") if stdout is None else stdout,
            stderr=_str(d, "stderr") if stderr is None else stderr,
            duration_ms=_int(d, "duration_ms"),
            truncated=_bool(d, "truncated"),
            limit=_opt_str(d, "limit"),
        )


@dataclass(frozen=True)
class WrittenFile:
    """A file put into a sandbox; ``path`` is absolute, as the sandbox sees it."""

    path: str
    size: int
    sha256: str

    @classmethod
    def from_dict(cls, d: Json) -> WrittenFile:
        return cls(_str(d, "path"), _int(d, "size"), _str(d, "sha256"))


@dataclass(frozen=True)
class FileEntry:
    """One entry of a sandbox folder listing."""

    path: str
    type: str
    size: int
    mode: str
    modified_at: datetime | None

    @property
    def is_dir(self) -> bool:
        return self.type == "dir"

    @classmethod
    def from_dict(cls, d: Json) -> FileEntry:
        return cls(_str(d, "path"), _str(d, "type"), _int(d, "size"), _str(d, "mode"),
                   parse_time(d.get("modified_at")))


@dataclass(frozen=True)
class Model:
    """A model of the server's catalogue, with its prices per million tokens."""

    id: str
    provider: str
    input_micros_per_million: int
    output_micros_per_million: int
    context_window: int | None
    max_output_tokens: int | None
    default: bool

    @classmethod
    def from_dict(cls, d: Json) -> Model:
        return cls(
            id=_str(d, "id"),
            provider=_str(d, "provider"),
            input_micros_per_million=_int(d, "input_micros_per_million"),
            output_micros_per_million=_int(d, "output_micros_per_million"),
            context_window=_opt_int(d, "context_window"),
            max_output_tokens=_opt_int(d, "max_output_tokens"),
            default=_bool(d, "default"),
        )
