"""A faithful local stand-in for Pinecone's data-plane HTTP API, for tests on loopback.

Implements what the Python SDK (7.x) calls for a serverless dense index: POST /vectors/upsert,
POST /query, GET /vectors/fetch, POST /vectors/delete, POST /describe_index_stats, with JSON bodies
in the API's camelCase. Metric: cosine. Filters follow Pinecone's documented semantics and are
interpreted here independently of citewise's own filter code. `fail_next` injects HTTP errors.
"""

from __future__ import annotations

import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


class FilterError(ValueError):
    pass


def _values(record: dict[str, Any], key: str) -> tuple[bool, list[Any]]:
    if key not in record:
        return False, []
    v = record[key]
    return True, list(v) if isinstance(v, list) else [v]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return isinstance(a, str) and isinstance(b, str) and a == b


def passes(flt: dict[str, Any] | None, md: dict[str, Any]) -> bool:
    if not flt:
        return True
    for key, cond in flt.items():
        if key == "$and":
            ok = all(passes(c, md) for c in cond)
        elif key == "$or":
            ok = any(passes(c, md) for c in cond)
        elif key.startswith("$"):
            raise FilterError(f"unsupported operator {key}")
        else:
            ops = cond if isinstance(cond, dict) else {"$eq": cond}
            present, vals = _values(md, key)
            ok = True
            for op, arg in ops.items():
                if op == "$eq":
                    ok &= any(_same(v, arg) for v in vals)
                elif op == "$ne":
                    ok &= not any(_same(v, arg) for v in vals)
                elif op == "$in":
                    ok &= any(_same(v, a) for v in vals for a in arg)
                elif op == "$nin":
                    ok &= not any(_same(v, a) for v in vals for a in arg)
                elif op == "$exists":
                    ok &= present == arg
                elif op in ("$gt", "$gte", "$lt", "$lte"):
                    if isinstance(arg, bool) or not isinstance(arg, int | float):
                        raise FilterError(f"{op} needs a number")
                    nums = [v for v in vals if isinstance(v, int | float) and not isinstance(v, bool)]
                    ok &= any({"$gt": x > arg, "$gte": x >= arg, "$lt": x < arg, "$lte": x <= arg}[op]
                              for x in nums)
                else:
                    raise FilterError(f"unsupported operator {op}")
        if not ok:
            return False
    return True


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


class PineconeStandIn:
    def __init__(self, dimension: int = 384):
        self.dimension = dimension
        self.namespaces: dict[str, dict[str, dict[str, Any]]] = {}
        self.fail_next: list[int] = []  # HTTP statuses to return for the next requests
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> PineconeStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- operations -------------------------------------------------------------------------------
    def upsert(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = self.namespaces.setdefault(body.get("namespace", ""), {})
        for v in body["vectors"]:
            if len(v["values"]) != self.dimension:
                raise FilterError(f"Vector dimension {len(v['values'])} does not match the dimension of the index "
                                  f"{self.dimension}")
            for key, value in (v.get("metadata") or {}).items():
                if value is None or (isinstance(value, list) and not all(isinstance(x, str) for x in value)):
                    raise FilterError(f"Metadata value for field {key} must be a string, number, boolean or "
                                      "list of strings")
            ns[v["id"]] = {"id": v["id"], "values": v["values"], "metadata": v.get("metadata") or {}}
        return {"upsertedCount": len(body["vectors"])}

    def query(self, body: dict[str, Any]) -> dict[str, Any]:
        ns_name = body.get("namespace", "")
        records = self.namespaces.get(ns_name, {})
        vector = body["vector"]
        flt = body.get("filter")
        scored = [(cosine(vector, r["values"]), r) for r in records.values() if passes(flt, r["metadata"])]
        scored.sort(key=lambda x: -x[0])
        matches = []
        for score, r in scored[: body.get("topK", 10)]:
            m: dict[str, Any] = {"id": r["id"], "score": score}
            if body.get("includeMetadata"):
                m["metadata"] = dict(r["metadata"])
            if body.get("includeValues"):
                m["values"] = r["values"]
            matches.append(m)
        return {"matches": matches, "namespace": ns_name, "usage": {"readUnits": 5}}

    def fetch(self, ids: list[str], namespace: str) -> dict[str, Any]:
        records = self.namespaces.get(namespace, {})
        return {"vectors": {i: records[i] for i in ids if i in records}, "namespace": namespace,
                "usage": {"readUnits": 1}}

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = self.namespaces.get(body.get("namespace", ""), {})
        if body.get("deleteAll"):
            ns.clear()
        for i in body.get("ids") or []:
            ns.pop(i, None)
        return {}

    def stats(self) -> dict[str, Any]:
        return {"namespaces": {k: {"vectorCount": len(v)} for k, v in self.namespaces.items()},
                "dimension": self.dimension, "indexFullness": 0.0,
                "totalVectorCount": sum(len(v) for v in self.namespaces.values()), "metric": "cosine",
                "vectorType": "dense"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _dispatch(self, method: str) -> None:
                url = urlparse(self.path)
                with standin.lock:
                    standin.requests.append(f"{method} {url.path}")
                    if not self.headers.get("Api-Key"):
                        return self._send(401, {"error": {"code": "UNAUTHENTICATED", "message": "no API key"}})
                    if standin.fail_next:
                        status = standin.fail_next.pop(0)
                        return self._send(status, {"error": {"code": "UNAVAILABLE", "message": "injected"}})
                    try:
                        if method == "GET" and url.path == "/vectors/fetch":
                            q = parse_qs(url.query)
                            return self._send(200, standin.fetch(q.get("ids", []), q.get("namespace", [""])[0]))
                        length = int(self.headers.get("Content-Length") or 0)
                        body = json.loads(self.rfile.read(length) or b"{}")
                        handlers = {"/vectors/upsert": standin.upsert, "/query": standin.query,
                                    "/vectors/delete": standin.delete,
                                    "/describe_index_stats": lambda _b: standin.stats()}
                        if url.path not in handlers:
                            return self._send(404, {"error": {"code": "NOT_FOUND", "message": url.path}})
                        return self._send(200, handlers[url.path](body))
                    except (FilterError, KeyError, TypeError) as exc:
                        return self._send(400, {"error": {"code": "INVALID_ARGUMENT", "message": str(exc)}})

            def do_GET(self) -> None:
                self._dispatch("GET")

            def do_POST(self) -> None:
                self._dispatch("POST")

        return Handler
