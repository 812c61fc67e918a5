"""The engine on its own: no LangGraph, thin nodes over it, one KB snapshot per run, and the defects
fixed while it was carved out of the nodes (each test here failed before its fix)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from citewise.config import Context
from citewise.engine.inquiry import detect_mode, minimum_max_tokens
from citewise.errors import InputError
from citewise.evals.questions import split_of
from tests.paths import ROOT

QUESTION = "How do I roll over my Acme 401(k) to an IRA?"


def test_engine_imports_and_answers_without_langgraph(kb_home: Path) -> None:
    code = ("import sys, json\nimport citewise.engine\nassert not any(m.startswith('langgraph') for m in sys.modules)\n"
            "from citewise.engine import answer\n"
            f"out = answer({QUESTION!r}, home={str(kb_home)!r})\n"
            "print(json.dumps({'langgraph': sorted(m for m in sys.modules if m.startswith('langgraph')),\n"
            "  'decision': out['decision'], 'article': out['article_reference']['article_id'],\n"
            "  'citations': len(out['citations']), 'steps': sorted(out['metadata']['timings_ms'])}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["langgraph"] == []
    assert result["decision"] == "needs_data" and result["article"] == "acme-401k-rollover" and result["citations"]
    assert {"intake", "extract_required_data", "retrieve", "assemble_context", "generate"} <= set(result["steps"])


def test_engine_and_graph_give_the_same_answer(kb_home: Path) -> None:
    from citewise.engine import answer
    from citewise.graphs.kb_agent import graph

    ctx = Context(home=str(kb_home))
    contribution = {"current_deferral_percentage": 5, "new_deferral_percentage": 8, "contribution_type": "pre-tax"}
    for question, data in ((QUESTION, {}), ("What is the capital of France?", {}),
                           ("How do I change my contribution rate at Acme?", contribution)):
        ours = answer(question, ctx=ctx, collected_data=data)
        theirs = graph.invoke({"question": question, "collected_data": data}, context=ctx)
        for key in ("decision", "confidence", "response", "citations", "article_reference", "required_fields",
                    "missing_fields", "guardrails"):
            assert ours.get(key) == theirs.get(key), (question, key)


def test_nodes_are_thin_adapters() -> None:
    nodes = [p for p in (ROOT / "nodes").glob("*.py") if p.name not in ("__init__.py", "common.py")]
    assert len(nodes) == 10
    for path in nodes:
        assert len(path.read_text().splitlines()) <= 40, path.name
        imports = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom)]
        siblings = [n.module for n in imports if (n.level == 1 and n.module != "common")
                    or (n.module or "").startswith("citewise.nodes")]
        assert siblings == [], f"{path.name} imports another node: {siblings}"


def test_facets_and_text_splitting_are_defined_once() -> None:
    package = [p for p in ROOT.rglob("*.py") if not p.is_relative_to(ROOT / "tests") and ".venv" not in p.parts]
    facets = [p.name for p in package if "FACETS = (" in p.read_text()]
    assert facets == ["articles.py"]
    # paragraph / list-item units come from kb/text.py only (kb/convert splits VTT cue blocks: a format)
    splitters = [p.name for p in package if "re.split(r\"\\n\\s*\\n\"" in p.read_text()
                 and "convert" not in p.parts]
    assert splitters == ["text.py"]


def test_no_assert_statements_in_runtime_code() -> None:
    package = [p for p in ROOT.rglob("*.py") if not p.is_relative_to(ROOT / "tests") and ".venv" not in p.parts]
    offenders = [p.name for p in package if any(isinstance(n, ast.Assert) for n in ast.walk(ast.parse(p.read_text())))]
    assert offenders == []


# --- defect 1: the environment never overrides an explicit value ---------------------------------
def test_explicit_configuration_beats_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEWISE_FUSION", "rrf")
    monkeypatch.setenv("CITEWISE_TOP_K", "7")
    assert Context(fusion="zscore").fusion == "zscore"
    assert Context().fusion == "rrf" and Context().top_k == 7  # env fills what the caller did not give
    assert Context().with_overrides(fusion="zscore").fusion == "zscore"
    assert Context(top_k=5).fusion == "rrf" and Context(top_k=5).top_k == 5
    with pytest.raises(InputError, match="unknown configuration field"):
        Context(fusion_mode="rrf")


# --- defect 2: one KB snapshot per run --------------------------------------------------------------
def test_a_run_keeps_its_snapshot_while_the_kb_changes(kb_copy: Path, tmp_path: Path) -> None:
    from citewise.graphs.kb_agent import graph
    from citewise.kb.ingest import ingest

    home = tmp_path / "home"
    ingest([kb_copy], home, progress=False)
    ctx = Context(home=str(home))
    steps = graph.stream({"question": "What is the minimum loan amount at Acme?"}, context=ctx,
                         stream_mode="values")
    first = next(steps)  # the input
    state = next(steps)  # after intake: the snapshot is pinned
    pinned = state["kb_generation"]
    (kb_copy / "acme" / "acme-401k-loan.md").unlink()  # another writer deletes the article mid-run
    assert ingest([kb_copy], home, prune=True, progress=False)["documents_removed"] == 1
    final = first
    for state in steps:
        final = state
    assert final["metadata"]["kb_generation"] == pinned
    assert final["article_reference"]["article_id"] == "acme-401k-loan"  # answered from the pinned snapshot
    assert all(c["doc_id"] == "acme-401k-loan" or c["doc_id"].startswith("acme") for c in final["citations"])
    later = graph.invoke({"question": "What is the minimum loan amount at Acme?"}, context=ctx)
    assert later["metadata"]["kb_generation"] > pinned
    assert all(c["doc_id"] != "acme-401k-loan" for c in later["citations"])


# --- defect 3: max_tokens too small for any context is refused with the minimum -------------------
def test_max_tokens_below_the_minimum_is_refused_and_the_minimum_answers(kb_home: Path) -> None:
    from citewise.engine import answer

    least = minimum_max_tokens(Context())
    with pytest.raises(InputError, match=f"within {least}\\.\\."):
        answer(QUESTION, home=kb_home, max_tokens=least - 1)
    out = answer(QUESTION, home=kb_home, max_tokens=least)
    assert out["metadata"]["chunks_used"] >= 1 and out["metadata"]["context_tokens"] <= int(0.7 * least)
    assert "failed verification" not in out["response"]["text"]


# --- defect 4: mode detection defaults to answer -----------------------------------------------------
def test_mode_detection_on_labelled_phrasings(record_property: pytest.FixtureRequest) -> None:
    rows = yaml.safe_load((ROOT / "tests" / "data" / "mode_phrasings.yaml").read_text())
    assert len(rows) >= 40
    assert detect_mode("What do I need to know about RMDs?") == "answer"
    assert detect_mode("What information do you have about loans?") == "answer"
    by_split: dict[str, list[bool]] = {"dev": [], "test": []}
    for r in rows:
        by_split[split_of(r["id"])].append(detect_mode(r["question"]) == r["mode"])
    accuracy = {k: sum(v) / len(v) for k, v in by_split.items()}
    record_property("report:mode detection", f"dev {accuracy['dev']:.1%} ({len(by_split['dev'])}), "
                                             f"test {accuracy['test']:.1%} ({len(by_split['test'])})")
    assert accuracy["test"] >= 0.95


# --- defect 6: a model that cannot answer abstains with its reason, in one call ------------------
def test_model_cannot_answer_abstains_with_its_reason(kb_home: Path) -> None:
    from citewise.graphs.kb_agent import graph
    from tests.openai_standin import OpenAIStandIn

    with OpenAIStandIn() as llm:
        llm.script = [{"json": {"cannot_answer": True, "reason": "The excerpts do not give a loan fee for 2031.",
                                "sections": []}}]
        ctx = Context(home=str(kb_home), llm_model="standin-model", llm_base_url=llm.base_url,
                      llm_required_fields=False)
        out = graph.invoke({"question": "What will Acme's loan fee be in 2031?"}, context=ctx)
        calls = len(llm.chat_requests())
    assert out["decision"] == "out_of_scope" and out["citations"] == [] and calls == 1
    assert "do not give a loan fee for 2031" in out["response"]["text"]


# --- defect 7: a resumed thread keeps the settings it started with -----------------------------------
def test_resume_keeps_the_threads_settings(kb_home: Path) -> None:
    from citewise import api
    from tests.openai_standin import OpenAIStandIn

    with OpenAIStandIn() as llm:
        first = api.ask("How do I roll over my 401(k)?", home=kb_home, interrupt_on_missing_data=True,
                        llm_model="standin-model", llm_base_url=llm.base_url, llm_required_fields=False)
        assert first["status"] == "interrupted"
        done = api.resume(first["thread_id"], {"record_keeper": "Acme Retirement", "separation_date": "2026-03-31",
                                               "receiving_institution": "Example Bank",
                                               "receiving_account_type": "IRA", "date_of_birth": "1960-05-01",
                                               "vested_balance": 40000}, home=kb_home)
    assert done["status"] == "done" and done["metadata"]["generator"] == "openai:standin-model"


def test_the_readme_layout_names_every_part_of_the_tree() -> None:
    """The layout section is how a newcomer finds things: each top-level entry, and each module of engine/,
    server/, retrieval/, store/, llm/ and graphs/ within its directory's lines, must be named in it (a new
    module without a line there fails here)."""
    import re
    import subprocess

    from tests.paths import ROOT

    readme = (ROOT / "README.md").read_text()
    layout = readme.split("## Layout", 1)[1].split("```")[1]
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    top = {f.split("/")[0] for f in files if not f.startswith(".") and "/" in f} | {
        f for f in files if "/" not in f and not f.startswith(".") and f not in ("__init__.py", "README.md")}
    missing = sorted(t for t in top if t not in layout)
    blocks: dict[str, str] = {}  # directory -> its lines (a top-level line and the indented ones below it)
    current = ""
    for line in layout.splitlines():
        if line and not line[0].isspace():
            current = line.split("/", 1)[0] if "/" in line.split(" ", 1)[0] else ""
        if current:
            blocks[current] = blocks.get(current, "") + line + "\n"
    modules = re.compile(r"(engine|server|retrieval|store|llm|graphs)/([a-z_]+)\.py$")
    for f in files:
        found = modules.match(f)
        if not found or found[2] == "__init__":
            continue
        directory, stem = found[1], found[2]
        block = blocks.get(directory, "")
        named = re.search(rf"\b{stem}\b", block) or (stem.startswith("artifact") and "artifact*.py" in block)
        if not named:
            missing.append(f"{directory}/{stem}.py")
    assert not missing, missing


def test_a_greeting_a_thank_you_or_an_agent_s_frame_does_not_change_the_answer(kb_home: Path) -> None:
    """Words the KB never uses lowered the share of the question the answer states: "Hi, ...", "... Thanks!"
    or "A customer is asking: ..." sent a question that was answered to `uncertain`. They come off at
    intake; the question does not."""
    from citewise.engine.pipeline import answer
    from citewise.engine.wording import without_pleasantries

    assert without_pleasantries("Hi there! Quick question: can I roll over? Thanks so much!") == "can I roll over?"
    assert without_pleasantries("Hey Acme, is the fee refundable? Any help appreciated :)") == \
        "Acme, is the fee refundable?"
    assert without_pleasantries("A customer is asking: can I roll over?") == "can I roll over?"
    assert without_pleasantries("Caller wants to know whether the fee is refundable.") == \
        "whether the fee is refundable."
    for kept in ("How do I write a thank you?", "Is there a hiring freeze?", "Thanks", "Question time: when?",
                 "The plan says: you must be 55. Is that right?", "Hi-yield bonds in my 401k?",
                 # someone in the asker's story is no support role passing the question on (the review)
                 "My ex-wife asked, is she entitled to half?", "The IRS wants to know whether I filed.",
                 "My spouse wants to know if she is the beneficiary.",
                 # a quoted word or two, or a quote opened by an apostrophe, is the question's own
                 'Is the "free" plan free?', '"Vested" means what?', "'Tis the season to roll over?"):
        assert without_pleasantries(kept) == kept
    assert without_pleasantries('A customer asks: "Can I roll over?"') == "Can I roll over?"
    assert without_pleasantries("\u2018Can\u2019t I roll over?\u2019") == "Can't I roll over?"
    assert without_pleasantries('"Can I roll over"?') == "Can I roll over?"
    assert without_pleasantries("Can I roll over?!") == "Can I roll over?"
    assert without_pleasantries("Fwd: Re: can I roll over? Thanks! Best, Sam") == "can I roll over?"
    # a question typed without its mark is still asked; a phone's apostrophe is the apostrophe
    assert without_pleasantries("I left in May. How much can I roll over") == "I left in May. How much can I roll over?"
    assert without_pleasantries("On which days can I call") == "On which days can I call?"
    assert without_pleasantries("Why can\u2019t I roll over") == "Why can't I roll over?"
    assert without_pleasantries("Rollover rules") == "Rollover rules"
    # (the second review) a contraction still asks; any emoji comes off, a check mark stays
    assert without_pleasantries("What's the deadline") == "What's the deadline?"
    assert without_pleasantries("Can I roll over? \u2728 Thanks!") == "Can I roll over?"
    from citewise.config import Context
    from citewise.engine.inquiry import validate

    # a reply's quote marks come off every line; a comparison at the start stays
    quoted_reply = validate({"question": "> Hi team,\n> How do I roll over my 401(k)?\n> Thanks,\n> Sam"}, Context())
    assert quoted_reply.question == "How do I roll over my 401(k)?"
    assert validate({"question": "> 50 employees: do we need a plan?"}, Context()).question.startswith("> 50")
    assert validate({"question": "Balance\n> $5,000: is a loan allowed?"}, Context()).question == \
        "Balance > $5,000: is a loan allowed?"
    from citewise.engine.wording import without_contact_lines
    # data that is part of the question stays: a birth date for an RMD, the card a question is about
    for kept in ("I was born on [DATE_OF_BIRTH]. Can I take an RMD?", "Why was my card [NUMBER] declined?",
                 "My account number is [ACCOUNT_NUMBER] and I want to close it.", "This is urgent. Can I roll over?",
                 # (the second review) a card the question is about, a sentence that asks, a name that is a subject
                 "My card [NUMBER]. Why was it declined?", "Is my card [NUMBER]? Or the old one?",
                 "Is my contact number [PHONE]? How do I reach you?", "This is Medicare. Does it cover dental?",
                 "Can I move my 401(k) to account [ACCOUNT_NUMBER]?", "Is it [NUMBER] or (card [NUMBER])?",
                 "(card [NUMBER]) was declined. Why?", "Is it my card? (card [NUMBER]) or the old one?",
                 "Can I take an RMD? (born [DATE_OF_BIRTH])", "Which plan covers me? (plan [b]) or (plan [c])?"):
        assert without_contact_lines(kept) == kept
    assert without_pleasantries("I was wondering if the fee is refundable?") == "if the fee is refundable?"
    assert without_pleasantries("Please, can I roll over?") == "can I roll over?"
    assert without_pleasantries("Please what is the fee?") == "what is the fee?"
    for kept in ("I hope all is well with the plan?", "Can you tell me the fee?", "Tell me about loans",
                 "Please send the form.", "Please explain the fee?",
                 "Is the Q: field needed?", "Is x > y for loans?", "Can I call __init__ twice?",
                 "What is the fee? - Acme",
                 # (the third review) code and comparisons are the question's
                 "Is 2**10 bytes the limit?", "What is **kwargs for?", "[Re]enrolment: how does it work?"):
        assert without_pleasantries(kept) == kept
    for kept in ("Re-enrolment: how does it work?", "Urgent-care visits: are they covered?", "Which fund is best?",
                 "Regards to the fee, is it refundable?",
                 # (the second review) words a device line or a flag is made of, used as the question's own
                 "Is my bonus sent from my employer taxable?", "Can I get Outlook for Mac on my work laptop?",
                 "Urgent - care visits covered?", "(urgent) care covered?", "Is option \u2713 required?",
                 "Do's and don'ts for rollovers", "Is it ok to say :-)"):
        assert without_pleasantries(kept) == kept
    question = "I never told Acme when to send the money I'm forced to take out of my 401k this year. What happens?"
    plain = answer(question, home=kb_home)
    for dressed in (f"Hi, {question}", f"Quick question: {question}", f"{question} Thanks!",
                    f"{question} Please help.", f"A customer is asking: {question}",
                    # pasted in quotes, or with its marks doubled: MiniLM read the marks as words (a probe:
                    # 17 of 552 answers changed decision or article, one answered question went out of scope)
                    f'"{question}"', f"A customer asks: \u201c{question}\u201d", question.replace("?", "??"),
                    # an e-mail or a phone's additions (a probe: 72 of 960 answers changed)
                    f"Re: {question}", f"URGENT: {question}", f"{question} Kind regards, Sam Taylor",
                    f"{question}\n\nThanks,\nSam", f"{question}\n\nSent from my iPhone", f"{question} \U0001F64F",
                    question.rstrip("?"), question.replace("'", "\u2019"),
                    # contact or identity data given with the question (masked, it still moved the answer: a
                    # probe changed 103 of 600 answers)
                    f"My name is Sam Taylor. {question} My email is sam@example.com.",
                    f"Call me on 555-123-4567. {question} My SSN is 123-45-6789.", f"{question} (account 123456789012)",
                    # the asker's own frame and courtesies (a probe: 49 of 560 answers changed, now 14, all with an
                    # added sentence of story, which is the question's)
                    f"I was wondering, {question}", f"Can you tell me: {question}", f"Sorry to bother you. {question}",
                    f"Hope you're well. {question}",
                    # a Q&A label, a reply's quote mark, an e-mail tag, Markdown bold (a probe: 19 of 640 changed)
                    f"Q: {question}", f"> {question}", f"[External] {question}", f"**{question}**"):
        got = answer(dressed, home=kb_home)
        assert (got["decision"], got["confidence"]) == (plain["decision"], plain["confidence"]), dressed


def test_a_slip_of_the_keyboard_in_a_provider_s_name_is_read_as_the_name(kb_home: Path) -> None:
    """"Harbovriew" named no provider, and the question was answered from another provider's article. Only
    names are read so: an uncommon real word the KB lacks ("incurable", "overage") is never rewritten."""
    from citewise.config import Context
    from citewise.engine.inquiry import lexicon
    from citewise.engine.pipeline import answer, open_snapshot
    from citewise.engine.spelling import Lexicon, corrected

    names = Lexicon(indexed={"submit", "loan", "harborview", "summit", "rmd"}.__contains__,
                    names={"harborview": "Harborview", "summit": "Summit"})
    assert corrected("my Harbovriew loan", names) == ("my Harborview loan", [("Harbovriew", "Harborview")])
    assert corrected("my harborveiw and Harborviw's loans", names)[0] == "my Harborview and Harborview's loans"
    # a word the KB uses is no slip; a short word and a wrong letter in a short word are not read as a name
    assert corrected("How do I submit it? Sumt? Summt?", names)[1] == [("Summt", "Summit")]
    assert corrected("Can I subnit it?", names)[1] == []  # not a name: left as written
    # a lower-case acronym plural is read as the singular the KB indexes; other vowel-less words stay
    assert corrected("when are rmds due? what about gps?", names)[1] == [("rmds", "rmd")]
    hours = Lexicon(indexed={"hr", "mr", "gp"}.__contains__)  # (the second review) "hrs", "Mrs", "GPS" stay
    assert corrected("How many hrs? Can Mrs Jones use GPS?", hours)[1] == []
    assert corrected("DO I TAKE RMDS? IS HARBOVRIEW OPEN?", names)[1] == [("RMDS", "RMD")]
    assert corrected("x" * 999, names)[1] == []  # too long to be a name
    kb = open_snapshot(Context(home=str(kb_home)))
    sample = lexicon(kb)
    assert all(sample.english(w) for w in ("costs", "twins", "tanked", "tripled", "elects", "medicare"))
    assert not any(sample.english(w) for w in ("withdarwals", "retirmeent", "harbovriew", "accuont", "recieve"))
    for real in ("Is my incurable illness covered?", "Was the overage refunded?", "Is a deferral unvested?"):
        assert corrected(real, sample)[1] == [], real  # general words are never read as the KB's words
    question = "What happens to my Harbovriew 401(k) loan if I leave my employer?"
    got = answer(question, home=kb_home)
    assert got["article_reference"]["article_id"] == "harborview-401k-loan", got["article_reference"]
    assert got["metadata"]["spelling"] == [["Harbovriew", "Harborview"]]
    assert answer(question.replace("Harbovriew", "Harborview"), home=kb_home)["metadata"]["spelling"] == []
