"""A real `ephemeral serve` for the tests, and a TCP proxy that breaks connections.

The server runs as a subprocess on a loopback port with a SQLite store in
a temporary folder, in-process (``wasm``) sandboxes and the built-in
``ephemeral/script`` model, which runs each prompt line as a shell command:
no provider, no network. The proxy sits between a client and the server
to lose a response or cut a stream at a chosen byte, the failures retries
and ``Last-Event-ID`` resumption exist for.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import httpx

DEFAULT_BIN = "/var/cache/ephemeral/target/release/ephemeral"
STARTUP_TIMEOUT = 60.0
RICH_BALANCE = 100_000_000
PER_RUN_CAP = 10_000_000
POOR_BALANCE = 1_000


def server_binary() -> str:
    return os.environ.get("EPHEMERAL_BIN") or DEFAULT_BIN


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running server, its keys (rich, poor and a second organisation) and its log."""

    url: str
    key: str
    poor_key: str
    other_key: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def _run_cli(binary: str, *args: str) -> str:
    done = subprocess.run([binary, *args], capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"`ephemeral {args[0]} {args[1]}` failed ({done.returncode}): {stderr}")
    return done.stdout.decode()


def _new_key(binary: str, config: Path, org: str) -> str:
    out = _run_cli(binary, "keys", "create", "--org", org, "--config", str(config))
    match = re.search(r"\beph_[0-9A-Za-z_]+", out)
    if not match:
        raise RuntimeError(f"`keys create --org {org}` printed no key")
    return match.group(0)


def _set_org(binary: str, config: Path, org: str, balance: int) -> None:
    _run_cli(binary, "orgs", "set", "--org", org, "--balance-micros", str(balance),
             "--per-run-cap-micros", str(PER_RUN_CAP), "--config", str(config))


def _write_config(data_dir: Path, port: int, extra: str) -> Path:
    config = data_dir / "config.toml"
    config.write_text(
        f'listen = "127.0.0.1:{port}"\n'
        f'data_dir = "{data_dir}"\n'
        'isolation = "wasm"\n'
        'default_model = "ephemeral/script"\n'
        "shutdown_grace_seconds = 2\n"
        + extra
    )
    return config


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode}):\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/v1/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the server was not healthy within {STARTUP_TIMEOUT:.0f} s")


def start_server(data_dir: Path, extra_config: str = "") -> Server:
    """Starts `ephemeral serve` with three organisations; the caller stops it."""
    binary = server_binary()
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"no server binary at {binary} (set EPHEMERAL_BIN)")
    data_dir.mkdir(parents=True, exist_ok=True)
    config = _write_config(data_dir, 0, extra_config)  # the CLI commands listen on nothing
    keys = {org: _new_key(binary, config, org) for org in ("sdk", "poor", "other")}
    for org, balance in (("sdk", RICH_BALANCE), ("poor", POOR_BALANCE), ("other", RICH_BALANCE)):
        _set_org(binary, config, org, balance)
    env = dict(os.environ)
    env.setdefault("EPHEMERAL_PROGRAMS_DIR", "/var/cache/ephemeral/programs")
    env.setdefault("EPHEMERAL_CACHE_DIR", "/var/cache/ephemeral/components")
    for attempt in range(3):
        port = free_port()
        config = _write_config(data_dir, port, extra_config)
        log_path = data_dir / f"serve-{attempt}.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen([binary, "serve", "--config", str(config)], stdout=log,
                                       stderr=subprocess.STDOUT, env=env, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, process, log_path)
        except RuntimeError as exc:
            if "in use" in str(exc).lower() and attempt < 2:
                continue  # lost the port to someone else between choosing and binding
            raise
        return Server(url, keys["sdk"], keys["poor"], keys["other"], data_dir, process, log_path)
    raise RuntimeError("could not start the server")


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# -- the proxy ---------------------------------------------------------------


@dataclass
class _Connection:
    fault: tuple[str, int]
    request_bytes: bytearray = field(default_factory=bytearray)


class FaultProxy:
    """A loopback TCP proxy; each new connection takes the next planned fault.

    Faults: ``drop`` forwards the request, waits for the server's answer to
    start, then closes the client's connection without a byte of it (the
    server did the work; the client never hears); ``cut N`` forwards the
    first N bytes of the answer, then closes. Unplanned connections pass.
    Clients that keep connections alive send several requests on one
    connection: use :func:`no_keepalive` to give each request its own.
    """

    def __init__(self, upstream_url: str) -> None:
        host, port = upstream_url.removeprefix("http://").split(":")
        self._upstream = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._faults: collections.deque[tuple[str, int]] = collections.deque()
        self.connections: list[_Connection] = []
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._thread.start()

    def pass_next(self, times: int = 1) -> None:
        self._faults.extend([("pass", 0)] * times)

    def drop_response(self, times: int = 1) -> None:
        self._faults.extend([("drop", 0)] * times)

    def cut_response_after(self, nbytes: int, times: int = 1) -> None:
        self._faults.extend([("cut", nbytes)] * times)

    def requests_text(self) -> list[str]:
        with self._lock:
            return [bytes(c.request_bytes).decode("latin-1") for c in self.connections]

    def header_values(self, name: str) -> list[str]:
        """Every value of a request header, over all connections, in order."""
        pattern = re.compile(rf"^{re.escape(name)}:\s*(.*?)\r?$", re.IGNORECASE | re.MULTILINE)
        return [v for text in self.requests_text() for v in pattern.findall(text)]

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=5)
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                _close(s)

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            fault = self._faults.popleft() if self._faults else ("pass", 0)
            connection = _Connection(fault)
            with self._lock:
                self.connections.append(connection)
            threading.Thread(target=self._serve, args=(client, connection), daemon=True).start()

    def _serve(self, client: socket.socket, connection: _Connection) -> None:
        try:
            upstream = socket.create_connection(self._upstream, timeout=10)
        except OSError:
            _close(client)
            return
        with self._lock:
            self._sockets.extend([client, upstream])
        client.settimeout(120)
        upstream.settimeout(120)
        threading.Thread(target=self._pump_request, args=(client, upstream, connection),
                         daemon=True).start()
        self._pump_response(upstream, client, connection.fault)
        _close(client)
        _close(upstream)

    def _pump_request(self, client: socket.socket, upstream: socket.socket,
                      connection: _Connection) -> None:
        try:
            while data := client.recv(65536):
                with self._lock:
                    connection.request_bytes.extend(data)
                upstream.sendall(data)
        except OSError:
            pass

    @staticmethod
    def _pump_response(upstream: socket.socket, client: socket.socket, fault: tuple[str, int]) -> None:
        kind, limit = fault
        sent = 0
        try:
            while data := upstream.recv(65536):
                if kind == "drop":
                    return
                if kind == "cut":
                    data = data[: max(0, limit - sent)]
                client.sendall(data)
                sent += len(data)
                if kind == "cut" and sent >= limit:
                    return
        except OSError:
            pass


def no_keepalive() -> httpx.Limits:
    """Connection limits that make every request open its own connection."""
    return httpx.Limits(max_keepalive_connections=0)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    s.close()
