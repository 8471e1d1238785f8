"""Ephemeral's Python SDK: agent runs and sandboxes on a self-hosted server.

    from ephemeral import Client

    client = Client()  # EPHEMERAL_URL, EPHEMERAL_API_KEY
    run = client.runs.create("echo hello", max_cost_micros=50_000)
    print(client.runs.wait(run.id).output)

    with client.sandboxes.create(max_cost_micros=100_000) as sbx:
        print(sbx.commands.run("python3 -c 'print(6*7)'").stdout)
"""

from ._client import AsyncClient, Client
from ._errors import (
    APIError,
    CommandError,
    ConfigurationError,
    Conflict,
    ConnectionError,
    EphemeralError,
    FieldError,
    IdempotencyKeyInUse,
    IdempotencyKeyReused,
    InsufficientFunds,
    IntegrityError,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    RunFinished,
    SandboxEnded,
    ServerError,
    ShuttingDown,
    TimeoutError,
    Unauthorized,
)
from ._sandboxes import AsyncSandbox, Sandbox
from ._streams import AsyncByteStream, AsyncEventStream, ByteStream, EventStream
from ._version import __version__
from .types import (
    CommandResult,
    ErrorInfo,
    Event,
    FileEntry,
    Model,
    Page,
    Run,
    RunFile,
    SandboxInfo,
    WrittenFile,
)

__all__ = [
    "APIError",
    "AsyncByteStream",
    "AsyncClient",
    "AsyncEventStream",
    "AsyncSandbox",
    "ByteStream",
    "Client",
    "CommandError",
    "CommandResult",
    "ConfigurationError",
    "Conflict",
    "ConnectionError",
    "EphemeralError",
    "ErrorInfo",
    "Event",
    "EventStream",
    "FieldError",
    "FileEntry",
    "IdempotencyKeyInUse",
    "IdempotencyKeyReused",
    "InsufficientFunds",
    "IntegrityError",
    "InvalidRequest",
    "Model",
    "NotFound",
    "Page",
    "PayloadTooLarge",
    "RateLimited",
    "Run",
    "RunFile",
    "RunFinished",
    "Sandbox",
    "SandboxEnded",
    "SandboxInfo",
    "ServerError",
    "ShuttingDown",
    "TimeoutError",
    "Unauthorized",
    "WrittenFile",
    "__version__",
]

# Tracebacks and reprs name the public path (ephemeral.NotFound), not the private module.
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = __name__
del _name, _obj
