"""The query log and tenant access, in-process: every surface writes exactly one row per answer (failures
included), rows are masked, filterable, pruned and can be turned off; access filters what the engine reads."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from citewise.config import Context
from citewise.engine import querylog
from citewise.engine.access import UNRESTRICTED, Access, from_user
from citewise.store.sqlite import Store
from tests.paths import ROOT

TENANT_KB = ROOT / "tests" / "data" / "tenants"
ALICE = {"identity": "alice", "namespaces": ["northwind"], "clearance": "internal"}
BOB = {"identity": "bob", "namespaces": ["globex"], "clearance": "confidential"}


def rows_since(home: Path, started: float) -> list[dict]:
    return Store(home).queries(since=started - 0.001, limit=1000)


# --- the store ------------------------------------------------------------------------------------
def test_store_keeps_finds_filters_and_prunes_rows(tmp_path: Path) -> None:
    store = Store(tmp_path)
    now = time.time()
    first = store.log_query({"id": "q1", "time": now - 3600, "identity": "alice", "decision": "can_proceed",
                             "question": "a"})
    second = store.log_query({"time": now - 60, "identity": "bob", "decision": "out_of_scope", "question": "b"})
    third = store.log_query({"id": "q1", "time": now, "identity": "alice", "decision": "can_proceed", "question": "c"})
    assert first == "q1" and second and third not in ("q1", second)  # a taken id gets a fresh one
    assert store.query("q1")["question"] == "a" and store.query("q1")["time"].endswith("+00:00")
    assert store.query("nope") is None
    assert [r["question"] for r in store.queries()] == ["c", "b", "a"]  # newest first
    assert [r["question"] for r in store.queries(decision="can_proceed")] == ["c", "a"]
    assert [r["question"] for r in store.queries(since=now - 120)] == ["c", "b"]
    assert [r["question"] for r in store.queries(since="1970-01-01T00:00:00Z", limit=1)] == ["c"]
    assert [r["question"] for r in store.queries(owner="bob")] == ["b"]
    assert store.prune_queries(now - 600) == 1 and store.query("q1") is None


def test_since_accepts_dates_times_and_durations() -> None:
    now = 1_800_000_000.0
    assert querylog.parse_since("7d", now=now) == now - 7 * 86400
    assert querylog.parse_since("30m", now=now) == now - 1800
    assert querylog.parse_since("2026-05-01") == querylog.parse_since("2026-05-01T00:00:00+00:00")
    with pytest.raises(ValueError, match="ISO-8601"):
        querylog.parse_since("yesterday")


# --- every surface, once ----------------------------------------------------------------------------
QUESTION = "How do I roll over my 401(k)? Send the forms to jane.doe@example.com"


def test_each_surface_writes_one_masked_row_per_answer(kb_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from citewise import api
    from citewise.cli import main
    from citewise.engine import answer
    from citewise.graphs.kb_agent import graph

    started = time.time()
    by_engine = answer(QUESTION, home=kb_home)
    by_python = api.ask(QUESTION, home=kb_home)
    by_graph = graph.invoke({"question": QUESTION}, context=Context(home=str(kb_home)))
    assert main(["ask", QUESTION, "--home", str(kb_home), "--json"]) == 0
    by_cli = json.loads(capsys.readouterr().out)
    rows = rows_since(kb_home, started)
    assert sorted(r["surface"] for r in rows) == ["cli", "engine", "graph", "python"]  # one row each
    ids = {r["surface"]: r["id"] for r in rows}
    assert ids == {"engine": by_engine["metadata"]["query_id"], "python": by_python["metadata"]["query_id"],
                   "graph": by_graph["metadata"]["query_id"], "cli": by_cli["metadata"]["query_id"]}
    for row in rows:
        assert row["question"] == "How do I roll over my 401(k)? Send the forms to [EMAIL]"
        assert row["decision"] == by_python["decision"] and row["error"] is None and row["mode"] == "answer"
        assert row["cited"] == [c["chunk_id"] for c in by_python["citations"]]
        assert set(row["cited"]) <= set(row["retrieved"]) and len(row["retrieved"]) >= len(row["cited"]) > 0
        assert {"intake", "extract_required_data", "retrieve", "generate"} <= set(row["timings_ms"])
        assert row["generator"] == "extractive" and row["prompt_tokens"] == 0 and row["identity"] == ""
        assert "jane.doe" not in json.dumps(row)

    assert main(["history", "--home", str(kb_home), "--json", "--since", "10m"]) == 0
    listed = {r["id"] for r in json.loads(capsys.readouterr().out)}
    assert set(ids.values()) <= listed
    assert main(["history", ids["cli"], "--home", str(kb_home)]) == 0
    text = capsys.readouterr().out
    assert ids["cli"] in text and "cli" in text and "[EMAIL]" in text


def test_a_paused_thread_is_logged_when_it_answers(kb_home: Path) -> None:
    from citewise import api

    started = time.time()
    paused = api.ask("How do I roll over my 401(k)?", home=kb_home, interrupt_on_missing_data=True)
    assert paused["status"] == "interrupted" and rows_since(kb_home, started) == []
    done = api.resume(paused["thread_id"], {"record_keeper": "Acme Retirement", "separation_date": "2026-03-31",
                                            "receiving_institution": "Example Bank", "receiving_account_type": "IRA",
                                            "date_of_birth": "1960-05-01", "vested_balance": 40000}, home=kb_home)
    rows = rows_since(kb_home, started)
    assert [r["id"] for r in rows] == [done["metadata"]["query_id"]] and rows[0]["decision"] == done["decision"]


def test_failures_are_logged_with_their_error(kb_home: Path) -> None:
    from citewise import api
    from citewise.engine import answer
    from citewise.errors import InputError

    started = time.time()
    with pytest.raises(InputError):
        api.ask("hi", home=kb_home)
    with pytest.raises(InputError):
        answer("What fees apply?", home=kb_home, filters={"$nor": []})
    rows = sorted(rows_since(kb_home, started), key=lambda r: r["surface"])
    assert [(r["surface"], r["decision"]) for r in rows] == [("engine", None), ("python", None)]
    assert rows[0]["error"].startswith("InputError: filter.$nor: unknown operator")
    assert rows[1]["error"].startswith("InputError: question must be 3-1000 characters")


def test_logging_can_be_turned_off_and_old_rows_expire(kb_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citewise import api

    started = time.time()
    out = api.ask("Can I borrow from my 401(k)?", home=kb_home, query_log=False)
    assert out["metadata"]["query_id"] is None and rows_since(kb_home, started) == []
    monkeypatch.setenv("CITEWISE_QUERY_LOG", "false")
    assert api.ask("Can I borrow from my 401(k)?", home=kb_home)["metadata"]["query_id"] is None
    monkeypatch.delenv("CITEWISE_QUERY_LOG")

    old = Store(kb_home).log_query({"time": time.time() - 40 * 86400, "question": "old", "identity": ""})
    querylog._PRUNED.clear()
    api.ask("Can I borrow from my 401(k)?", home=kb_home, query_log_retention_days=30)
    assert Store(kb_home).query(old) is None


def test_no_row_and_no_database_for_a_home_that_was_never_ingested(tmp_path: Path) -> None:
    from citewise.engine import answer
    from citewise.errors import NotIngestedError

    with pytest.raises(NotIngestedError):
        answer("How do I roll over my 401(k)?", home=tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()


# --- access ----------------------------------------------------------------------------------------
def test_access_filters_fail_closed() -> None:
    assert UNRESTRICTED.filter() == {} and UNRESTRICTED.can_read_log("anyone")
    alice = from_user(ALICE)
    assert alice.filter() == {"$and": [{"namespace": {"$in": ["northwind"]}},
                                       {"confidentiality": {"$in": ["public", "internal"]}}]}
    assert alice.allows({"namespace": "northwind", "confidentiality": "internal"})
    assert not alice.allows({"namespace": "northwind", "confidentiality": "confidential"})
    assert not alice.allows({"namespace": "globex", "confidentiality": "public"})
    assert alice.can_read_log("alice") and not alice.can_read_log("bob") and not alice.can_read_log("")
    everything = from_user({"identity": "ops", "namespaces": ["*"], "clearance": "restricted"})
    assert everything.filter() == {} and not everything.can_read_log("bob")  # reads all documents, not all logs
    nothing = from_user({"identity": "mallory"})  # says nothing about namespaces or clearance
    assert nothing.filter() == {"$and": [{"namespace": {"$in": []}}, {"confidentiality": {"$in": []}}]}
    assert from_user({"identity": "x", "namespaces": ["globex"], "clearance": "top-secret"}).allows(
        {"namespace": "globex", "confidentiality": "public"}) is False
    assert isinstance(from_user(None), Access) and from_user(None) is UNRESTRICTED


@pytest.fixture(scope="module")
def tenant_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from citewise.kb.ingest import ingest

    home = tmp_path_factory.mktemp("tenants")
    summary = ingest([TENANT_KB], home, progress=False)
    assert summary["errors"] == [] and summary["documents_total"] == 5
    return home


def test_documents_carry_namespace_and_confidentiality(tenant_home: Path, kb_copy: Path, tmp_path: Path) -> None:
    from citewise.kb.ingest import ingest

    docs = {d["doc_id"]: d["metadata"] for d in Store(tenant_home).documents()}
    assert docs["globex-cinderpeak-audit"]["confidentiality"] == "restricted"
    assert docs["northwind-quillfeather-stipend"]["namespace"] == "northwind"
    bad = kb_copy / "acme" / "acme-401k-loan.md"
    bad.write_text(bad.read_text().replace("topic: loan", "topic: loan\nconfidentiality: secret", 1))
    summary = ingest([kb_copy], tmp_path / "home", progress=False)
    assert any("confidentiality 'secret' must be one of public, internal, confidential, restricted" in e
               for e in summary["errors"])
    stored = {d["doc_id"]: d["metadata"] for d in Store(tmp_path / "home").documents()}
    assert "acme-401k-loan" not in stored  # refused, not silently made public
    assert stored["acme-401k-rollover"]["namespace"] == "default"
    assert stored["acme-401k-rollover"]["confidentiality"] == "public"


def test_the_engine_reads_only_what_the_identity_may(tenant_home: Path) -> None:
    from citewise.engine import answer
    from citewise.engine.pipeline import search_passages

    alice, bob = from_user(ALICE), from_user(BOB)
    own = answer("How much is the quillfeather stipend per night?", home=tenant_home, access=alice)
    assert own["citations"] and {c["doc_id"] for c in own["citations"]} == {"northwind-quillfeather-stipend"}
    for question in ("How long is the vantablue sabbatical leave?", "What did the cinderpeak audit find?",
                     "How large is the marrowgrass retention bonus?"):
        out = answer(question, home=tenant_home, access=alice)
        assert out["decision"] == "out_of_scope" and out["citations"] == [], question
        covered = out["response"]["text"].split("This knowledge base covers:")[1]  # only alice's own topics
        assert covered.strip() == "quillfeather stipend."
        assert "Globex" not in json.dumps(out["metadata"]["facets_detected"])
    found = search_passages("vantablue sabbatical leave", home=tenant_home, access=alice,
                            filters={"$or": [{"namespace": "globex"}, {"confidentiality": "restricted"}]})
    assert found["passages"] == []
    mine = search_passages("cinderpeak audit ochrefall merger vantablue", home=tenant_home, access=bob, k=20)
    assert {p["doc_id"] for p in mine["passages"]} <= {"globex-ochrefall-merger", "globex-vantablue-leave"}
    assert "globex-ochrefall-merger" in {p["doc_id"] for p in mine["passages"]}
    claimed = answer("What is needed to request the vantablue sabbatical leave?", home=tenant_home, access=bob,
                     collected_data={"record_keeper": "Northwind Benefits"})
    assert claimed["invalid_fields"] == {"record_keeper": "'Northwind Benefits' is not a known record keeper"}
    row = Store(tenant_home).query(claimed["metadata"]["query_id"])
    assert row["identity"] == "bob" and row["namespaces"] == ["globex"] and row["clearance"] == "confidential"


# --- LangSmith: a row and its trace share one id --------------------------------------------------------
class LangSmithStandIn:
    """A loopback LangSmith endpoint that keeps the runs the client posts (multipart ingestion)."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.parts: dict[str, dict] = {}
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _reply(self) -> None:
                data = json.dumps({"version": "0.0", "batch_ingest_config": {}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._reply()

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                boundary = self.headers.get("Content-Type", "").partition("boundary=")[2].encode()
                for part in body.split(b"--" + boundary) if boundary else []:
                    head, _, payload = part.partition(b"\r\n\r\n")
                    name = head.partition(b'name="')[2].partition(b'"')[0].decode()
                    if name and payload.strip():
                        stand_in.parts[name] = json.loads(payload.strip())
                self._reply()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


TRACED = """
import json
from citewise import api
from citewise.engine import answer
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith.run_trees import get_cached_client

ids = [api.ask("Can I borrow from my 401(k)?", home=HOME)["metadata"]["query_id"],
       answer("Can I borrow from my 401(k)?", home=HOME)["metadata"]["query_id"]]
wait_for_all_tracers()
get_cached_client().flush()
print(json.dumps(ids))
"""


@pytest.mark.slow
def test_a_log_row_and_its_langsmith_trace_share_one_id(kb_home: Path) -> None:
    import os
    import subprocess
    import sys

    stand_in = LangSmithStandIn()
    env = {**os.environ, "LANGSMITH_TRACING": "true", "LANGSMITH_API_KEY": "lsv2-test-key",
           "LANGSMITH_ENDPOINT": stand_in.url, "HF_HUB_OFFLINE": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", f"HOME = {str(kb_home)!r}\n" + TRACED], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=300, check=True)
    finally:
        stand_in.server.shutdown()
    by_graph, by_engine = json.loads(done.stdout.strip().splitlines()[-1])
    for query_id, surface, name in ((by_graph, "python", "kb_agent"), (by_engine, "engine", "citewise.engine.answer")):
        run = stand_in.parts[f"post.{query_id}"]
        assert run["trace_id"] == query_id and run["name"] == name and f"surface:{surface}" in run["tags"]
        assert stand_in.parts[f"post.{query_id}.extra"]["metadata"]["citewise_query_id"] == query_id
        assert Store(kb_home).query(query_id)["surface"] == surface
