"""A fake OpenAI-compatible chat-completions server, for running the examples in CI.

It speaks the wire format of ``POST /v1/chat/completions`` (a JSON answer,
or with ``"stream": true`` Server-Sent Events of ``chat.completion.chunk``s
ending with ``data: [DONE]``) and plays a script instead of thinking: each
turn it calls the request's first tool with the next command of SCRIPT,
and once the script is done it answers in text, quoting what the tool
returned, so a caller can check that the commands really ran in a sandbox.

    python examples/fake_openai.py --port 0 --port-file /tmp/port --log /tmp/requests.jsonl

Standard library only; listens on 127.0.0.1. Requests need
``Authorization: Bearer $FAKE_OPENAI_KEY`` when that variable is set.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# The commands the fake model runs, in order, before it answers.
SCRIPT = [
    "echo $((6 * 7))",
    "python3 -c 'print(sum(range(10)))'",
]
MODEL = "fake-model"
LOG_LOCK = threading.Lock()


def tool_results(messages: list[dict[str, Any]]) -> list[str]:
    """What the tools answered so far, in order (each ``role: tool`` message)."""
    results = []
    for message in messages:
        if message.get("role") == "tool":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            results.append(str(content))
    return results


def next_turn(request: dict[str, Any]) -> dict[str, Any]:
    """The assistant message of this turn: a tool call, or the final answer."""
    done = tool_results(request.get("messages", []))
    tools = request.get("tools") or []
    if tools and len(done) < len(SCRIPT):
        name = tools[0].get("function", {}).get("name", "shell")
        call = {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                "function": {"name": name, "arguments": json.dumps({"command": SCRIPT[len(done)]})}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    quoted = " | ".join(" ".join(r.split()) for r in done)
    return {"role": "assistant", "content": f"Final answer. The sandbox said: {quoted}"}


def usage() -> dict[str, int]:
    return {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
        "model": MODEL, "system_fingerprint": "fake",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": usage(),
    }


def chunks(message: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The same message as a stream: role, then pieces of content or of the call's arguments."""
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": MODEL, "system_fingerprint": "fake"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    if message.get("tool_calls"):
        call = message["tool_calls"][0]
        arguments = call["function"]["arguments"]
        out.append(chunk({"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                          "function": {"name": call["function"]["name"], "arguments": ""}}]}))
        for i in range(0, len(arguments), 8):
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[i:i + 8]}}]}))
        out.append(chunk({}, "tool_calls"))
    else:
        text = message["content"]
        for i in range(0, len(text), 12):
            out.append(chunk({"content": text[i:i + 12]}))
        out.append(chunk({}, "stop"))
    if include_usage:
        out.append({**base, "choices": [], "usage": usage()})
    return out


class Handler(BaseHTTPRequestHandler):
    """``/v1/chat/completions`` and ``/v1/models``; everything else is a 404."""

    server_version = "fake-openai/1"
    log_path: Path | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the examples' output is what is being checked

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": MODEL, "object": "model", "owned_by": "fake"}
            self.send_json(200, {"object": "list", "data": [model]})
        else:
            self.send_json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return
        key = os.environ.get("FAKE_OPENAI_KEY")
        if key and self.headers.get("Authorization") != f"Bearer {key}":
            self.send_json(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        message = next_turn(request)
        self.record(request, message)
        if request.get("stream"):
            include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
            self.send_stream(chunks(message, include_usage))
        else:
            self.send_json(200, completion(message))

    def record(self, request: dict[str, Any], message: dict[str, Any]) -> None:
        if self.log_path is None:
            return
        entry = {"stream": bool(request.get("stream")), "model": request.get("model"),
                 "tools": [t.get("function", {}).get("name") for t in request.get("tools") or []],
                 "tool_results": tool_results(request.get("messages", [])),
                 "answer": "tool_call" if message.get("tool_calls") else "text"}
        with LOG_LOCK, open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_stream(self, events: list[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--log", type=Path, help="append one JSON line per completion request")
    args = parser.parse_args()
    Handler.log_path = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if args.port_file:
        args.port_file.write_text(str(port))
    print(f"fake OpenAI listening on http://127.0.0.1:{port}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
