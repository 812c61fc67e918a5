"""An OpenAI-compatible HTTP server on loopback that plays scripted responses, for tests.

Serves POST /v1/chat/completions (plain and `stream: true` server-sent events) and POST
/v1/embeddings. Each chat request pops the next scripted step; with no step left it answers like a
careful model: the first sentence of excerpt C1 (or of the excerpt the step names), cited.
Steps: {"json": obj} | {"content": str} | {"status": int} | {"sleep": seconds, then: step} |
{"answer_from": "C2", "extra": "text"} | {"raw": str, "content_type": str} (an HTTP 200 whose body is
`raw` as it is, e.g. an HTML error page from a proxy: not JSON). Requests are recorded for assertions.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

CHUNK = re.compile(r'<chunk id="(C\d+)"[^>]*>\n(.*?)\n</chunk>', re.S)


def first_sentence(text: str) -> str:
    text = re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", text.replace("&lt;", "<").replace("&gt;", ">").strip())
    return re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0].strip()


def careful_answer(messages: list[dict[str, Any]], label: str = "C1", extra: str = "") -> dict[str, Any]:
    user = next((m["content"] for m in messages if m["role"] == "user"), "")
    chunks = dict(CHUNK.findall(user))
    if label not in chunks:
        return {"cannot_answer": True, "sections": []}
    components = [{"text": first_sentence(chunks[label]), "citations": [label]}]
    if extra:
        components.append({"text": extra, "citations": [label]})
    return {"cannot_answer": False, "sections": [{"topic": "Answer", "answer_components": components, "steps": [],
                                                  "warnings": []}]}


def fake_embedding(text: str, dim: int) -> list[float]:
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    v = np.random.default_rng(seed).normal(size=dim)
    return (v / np.linalg.norm(v)).tolist()


class OpenAIStandIn:
    def __init__(self, embedding_dim: int = 64):
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.embedding_dim = embedding_dim
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")  # no keep-alive: a stopped stand-in must not answer
                self.end_headers()
                self.close_connection = True
                self.wfile.write(data)

            def _raw(self, body: str, content_type: str) -> None:
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                self.wfile.write(data)

            def do_POST(self) -> None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # client gave up (timeout test)
                    self._post()

            def _post(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with standin.lock:
                    standin.requests.append({"path": self.path, "body": body,
                                             "auth": self.headers.get("Authorization", "")})
                    step = standin.script.pop(0) if standin.script and self.path.endswith("/chat/completions") else {}
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "index": i,
                             "embedding": fake_embedding(str(t), standin.embedding_dim)} for i, t in enumerate(inputs)]
                    return self._json(200, {"object": "list", "data": data, "model": body.get("model"),
                                            "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                if not self.path.endswith("/chat/completions"):
                    return self._json(404, {"error": {"message": "not found"}})
                while "sleep" in step:
                    time.sleep(step["sleep"])
                    step = step.get("then", {})
                if "raw" in step:
                    return self._raw(step["raw"], step.get("content_type", "text/html"))
                if "status" in step:
                    return self._json(step["status"], {"error": {"message": "scripted error", "type": "scripted",
                                                                 "code": str(step["status"])}})
                if "content" in step:
                    content = step["content"]
                elif "json" in step:
                    content = json.dumps(step["json"])
                else:
                    content = json.dumps(careful_answer(body["messages"], step.get("answer_from", "C1"),
                                                        step.get("extra", "")))
                if body.get("stream"):
                    return self._stream(body, content)
                return self._json(200, {
                    "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", "standin"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})

            def _stream(self, body: dict[str, Any], content: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

                def send(obj: dict[str, Any] | str) -> None:
                    payload = f"data: {obj if isinstance(obj, str) else json.dumps(obj)}\n\n".encode()
                    self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
                    self.wfile.flush()

                base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": body.get("model", "standin")}
                send({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
                for i in range(0, len(content), 12):
                    send({**base, "choices": [{"index": 0, "delta": {"content": content[i:i + 12]}}]})
                send({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                send("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler
