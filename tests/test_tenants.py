"""Tenants kept apart through a real `langgraph dev`: two tokens with different namespaces and clearances,
and every way one might reach the other's documents, log rows or threads — the HTTP routes (with filters
that try to widen the search), the run API (wait, stream, spoofed auth in config and context) and the
thread API. Each attempt is counted; the acceptance bar is at least 20, all refused or empty."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.paths import ROOT
from tests.server import langgraph_dev

pytestmark = pytest.mark.slow

TENANT_KB = ROOT / "tests" / "data" / "tenants"
TOKENS = {
    "alice": ("tenants-alice-0001", {"identity": "alice", "namespaces": ["northwind"], "clearance": "internal"}),
    "bob": ("tenants-bob-00001", {"identity": "bob", "namespaces": ["globex"], "clearance": "confidential"}),
}
# What each document says that nobody could guess, and a question that finds it.
DOCS = {
    "northwind-quillfeather-stipend": ("85 dollars", "How much is the quillfeather travel stipend per night?"),
    "northwind-marrowgrass-bonus": ("40 percent", "How large is the marrowgrass retention bonus?"),
    "globex-vantablue-leave": ("eight weeks", "How long is the vantablue sabbatical leave?"),
    "globex-ochrefall-merger": ("1.7 shares", "What does the ochrefall merger exchange each share for?"),
    "globex-cinderpeak-audit": ("three control failures", "What did the cinderpeak audit find in the ledger?"),
}
READS = {"alice": {"northwind-quillfeather-stipend"},
         "bob": {"globex-vantablue-leave", "globex-ochrefall-merger"}}
FORBIDDEN = {user: set(DOCS) - docs for user, docs in READS.items()}
OTHER = {"alice": "bob", "bob": "alice"}
CROSSINGS: list[str] = []


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from citewise.kb.ingest import ingest

    tmp = tmp_path_factory.mktemp("tenants-server")
    summary = ingest([TENANT_KB], tmp / "home", progress=False)
    assert summary["errors"] == [] and summary["documents_total"] == 5
    tokens = tmp / "tokens.json"
    tokens.write_text(json.dumps({token: identity for token, identity in TOKENS.values()}))
    with langgraph_dev(tmp / "home", tmp / "langgraph-dev.log",
                       extra_env={"CITEWISE_AUTH_TOKENS_FILE": str(tokens)}) as url:
        yield url


def headers(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user][0]}"}


@pytest.fixture(scope="module")
def http(server: str) -> Iterator[dict[str, httpx.Client]]:
    clients = {u: httpx.Client(base_url=server, headers=headers(u), timeout=120) for u in TOKENS}
    yield clients
    for client in clients.values():
        client.close()


def leaked(user: str, payload: Any) -> list[str]:
    """Forbidden document ids or facts anywhere in a response."""
    text = json.dumps(payload, ensure_ascii=False).lower()
    return [d for d in FORBIDDEN[user] if d in text or DOCS[d][0].lower() in text]


def crossing(name: str, attempt: Callable[[], Any], user: str) -> Any:
    """One attempt to reach what `user` may not: nothing forbidden may come back."""
    CROSSINGS.append(name)
    result = attempt()
    assert leaked(user, result) == [], (name, result)
    return result


def test_each_identity_reads_its_own_documents(http: dict[str, httpx.Client]) -> None:
    for user, docs in READS.items():
        for doc in docs:
            fact, question = DOCS[doc]
            body = http[user].post("/v1/answer", json={"inquiry": question}).json()
            assert doc in {c["doc_id"] for c in body["citations"]}, (user, doc, body["decision"])
            assert fact in body["response"]["text"]
            found = http[user].post("/v1/query", json={"query": question, "top_k": 3}).json()
            assert found["passages"] and found["passages"][0]["doc_id"] == doc


def test_no_route_retrieves_or_cites_another_tenants_documents(http: dict[str, httpx.Client]) -> None:
    for user, client in http.items():
        other_ns = "globex" if user == "alice" else "northwind"
        for doc in sorted(FORBIDDEN[user]):
            question = DOCS[doc][1]
            crossing(f"{user} /v1/query {doc}",
                     lambda c=client, q=question: c.post("/v1/query", json={"query": q, "top_k": 20}).json(), user)
            body = crossing(f"{user} /v1/answer {doc}",
                            lambda c=client, q=question: c.post("/v1/answer", json={"inquiry": q}).json(), user)
            assert body["citations"] == [] and body["decision"] == "out_of_scope"
            crossing(f"{user} /api/v1/query/answer {doc}",
                     lambda c=client, q=question: c.post("/api/v1/query/answer", json={"query": q, "topK": 50}).json(),
                     user)
        for flt in ({"namespace": other_ns}, {"$or": [{"namespace": other_ns}, {"confidentiality": "restricted"}]},
                    {"namespace": {"$exists": True}}, {"confidentiality": {"$in": ["confidential", "restricted"]}}):
            body = crossing(f"{user} /v1/query filter {flt}", lambda c=client, f=flt: c.post("/v1/query", json={
                "query": "sabbatical stipend bonus merger audit", "top_k": 50, "filters": f}).json(), user)
            assert all(p["doc_id"] in READS[user] for p in body["passages"])
        other_keeper = "Globex Trust" if user == "alice" else "Northwind Benefits"
        body = crossing(f"{user} /v1/required-data record_keeper", lambda c=client, k=other_keeper: c.post(
            "/v1/required-data", json={"inquiry": "What must be collected to request this benefit?",
                                       "record_keeper": k}).json(), user)
        assert body["article_reference"] is None
        events = crossing(f"{user} /v1/answer/stream", lambda c=client, u=user: c.post("/v1/answer/stream", json={
            "inquiry": DOCS[sorted(FORBIDDEN[u])[0]][1]}).text, user)
        assert "event: answer" in events
        crossing(f"{user} spec stream", lambda c=client, u=user: c.post("/api/v1/query/answer", json={
            "query": DOCS[sorted(FORBIDDEN[u])[-1]][1], "stream": True}).text, user)


def test_the_run_api_applies_the_token_not_the_request(server: str) -> None:
    spoof = {"identity": "root", "namespaces": ["*"], "clearance": "restricted", "admin": True}
    for user in TOKENS:
        client = get_sync_client(url=server, headers=headers(user))
        for doc in sorted(FORBIDDEN[user]):
            out = crossing(f"{user} run API wait {doc}", lambda c=client, d=doc: c.runs.wait(
                None, "kb_agent", input={"question": DOCS[d][1]}), user)
            assert out["citations"] == []
        doc = sorted(FORBIDDEN[user])[0]
        out = crossing(f"{user} run API config spoof", lambda c=client, d=doc: c.runs.wait(
            None, "kb_agent", input={"question": DOCS[d][1]}, config={"configurable": {"langgraph_auth_user": spoof}}),
            user)
        assert out["citations"] == []
        out = crossing(f"{user} run API context spoof", lambda c=client, d=doc: c.runs.wait(
            None, "kb_agent", input={"question": DOCS[d][1], "filters": {"namespace": {"$exists": True}}},
            context={"langgraph_auth_user": spoof}), user)
        assert out["citations"] == []
        crossing(f"{user} run API stream", lambda c=client, d=doc: [
            (e.event, e.data) for e in c.runs.stream(None, "kb_agent", input={"question": DOCS[d][1]},
                                                     stream_mode=["updates", "custom", "values"])], user)


def test_log_rows_and_threads_stay_with_their_owner(server: str, http: dict[str, httpx.Client]) -> None:
    own: dict[str, list[str]] = {}
    threads: dict[str, str] = {}
    for user, client in http.items():
        fact_doc = sorted(READS[user])[0]
        r = client.post("/v1/answer", json={"inquiry": DOCS[fact_doc][1]})
        sdk = get_sync_client(url=server, headers=headers(user))
        thread = sdk.threads.create()
        out = sdk.runs.wait(thread["thread_id"], "kb_agent", input={"question": DOCS[fact_doc][1]})
        own[user] = [r.headers["x-query-id"], out["metadata"]["query_id"]]
        threads[user] = thread["thread_id"]
        assert all(client.get(f"/v1/queries/{q}").status_code == 200 for q in own[user])
    for user, client in http.items():
        other = OTHER[user]
        for query_id in own[other]:
            CROSSINGS.append(f"{user} reads {other}'s log row")
            r = client.get(f"/v1/queries/{query_id}")
            assert r.status_code == 404 and leaked(user, r.json()) == []
        CROSSINGS.append(f"{user} lists the log")
        rows = client.get("/v1/queries", params={"limit": 1000}).json()["queries"]
        assert rows and {row["identity"] for row in rows} == {user} and not set(own[other]) & {r["id"] for r in rows}

        sdk = get_sync_client(url=server, headers=headers(user))
        theirs = threads[other]
        attempts = thread_attempts(sdk, theirs, user)
        for name, attempt in attempts:
            CROSSINGS.append(f"{user} thread {name} on {other}'s thread")
            with pytest.raises(httpx.HTTPStatusError) as refused:
                attempt()
            assert refused.value.response.status_code in (403, 404), (name, refused.value.response.text)
        CROSSINGS.append(f"{user} searches threads")
        assert theirs not in {t["thread_id"] for t in sdk.threads.search(limit=100)}
    for user in TOKENS:  # the owners still have everything
        sdk = get_sync_client(url=server, headers=headers(user))
        assert sdk.threads.get_state(threads[user])["values"]["decision"]


def thread_attempts(sdk: Any, theirs: str, user: str) -> list[tuple[str, Callable[[], Any]]]:
    """Everything the thread API lets one do to a thread, aimed at someone else's."""
    return [
        ("get", lambda: sdk.threads.get(theirs)),
        ("state", lambda: sdk.threads.get_state(theirs)),
        ("history", lambda: sdk.threads.get_history(theirs)),
        ("runs", lambda: sdk.runs.list(theirs)),
        ("new run", lambda: sdk.runs.wait(theirs, "kb_agent", input={"question": "What was asked here?"})),
        ("update", lambda: sdk.threads.update(theirs, metadata={"owner": user})),
        ("update state", lambda: sdk.threads.update_state(theirs, {"question": "hijacked"})),
        ("delete", lambda: sdk.threads.delete(theirs)),
    ]


def test_enough_crossings_were_attempted(record_property: Any) -> None:
    record_property("report:tenant isolation crossings attempted (all refused)", len(CROSSINGS))
    assert len(CROSSINGS) >= 20, CROSSINGS
