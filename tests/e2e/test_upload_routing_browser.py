"""Routing never hides an upload: the app as `make run` starts it (the demo documents and the demo intent tree,
whose every leaf searches "demo"; the packaged model routes and answers), a real PDF manual uploaded into
"default" through the page, and five questions about it asked with nothing picked in *Search in*. Every one must
search the upload: its passages reach the answer's prompt, as the request's trace records (never judged by the
model's wording).

The PDF is the Flex manual Debian's flex-doc package ships (/usr/share/doc/flex-doc/flex.pdf.gz; .ci/run installs
it): in none of our sets and not held out. Ingesting all 140 pages takes minutes on 2 cores, so the test keeps
pages 19-44 and 54-60 of the manual (the generated scanner, start conditions, input buffers, end-of-file rules,
macros, the values available to actions, yacc, scanner options; the reentrant API), cut with pypdf. The questions
were written from that text before the app was run on them; one is a follow-up that only makes sense after the one
before it.
"""

from __future__ import annotations

import gzip
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.upload import choose_files
from tests.workers import MODEL_THREADS

pytestmark = [pytest.mark.e2e, pytest.mark.llm, pytest.mark.slow]

FLEX_PDF = Path("/usr/share/doc/flex-doc/flex.pdf.gz")
# 0-based pages of the PDF: its printed page n is PDF page n + 6.
PAGES = [*range(25, 51), *range(60, 67)]
UPLOAD = "flex.pdf"
# Each question stands for one way routing went when the packaged model was asked ten: the embedder routes to a
# demo leaf and the upload's base is searched beside it (the first two, and yywrap, the best fit to a demo leaf of
# all ten); the tree falls back without a model call (case-insensitive); the classifier is asked and falls back
# (%array, the weakest fit). The follow-up is the one a product bug lost (a strong demo passage skipped its
# rewrite); the fifth question is the first whose older turns are folded into a summary. The five others took
# those same ways, and two minutes more on 2 cores.
QUESTIONS = [
    "What does yylex_init return on success?",
    "and when it fails?",
    "What happens when yywrap() returns zero?",
    "How do I make flex generate a case-insensitive scanner?",
    "How big is yytext when %array is used?",
]
ANSWERS: dict[str, Any] = {"max_tokens": 48, "verify": False}  # enough to start an answer; the search is all read
WAIT_MS = 900_000  # one question on a busy 2-core machine: rewrite, routing, search, answer by the local model


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def flex_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not FLEX_PDF.is_file():
        pytest.fail(f"{FLEX_PDF} is missing: install Debian's flex-doc (apt-get install flex-doc; see .ci/run)")
    from pypdf import PdfReader, PdfWriter

    folder = tmp_path_factory.mktemp("flex")
    whole = folder / "whole.pdf"
    whole.write_bytes(gzip.decompress(FLEX_PDF.read_bytes()))
    writer = PdfWriter()
    reader = PdfReader(whole)
    for index in PAGES:
        writer.add_page(reader.pages[index])
    cut = folder / UPLOAD
    with cut.open("wb") as out:
        writer.write(out)
    return cut


@pytest.fixture(scope="module")
def demo_app(
    tmp_path_factory: pytest.TempPathFactory, shared_models: Any, indexed_demo: Callable[[Path], None]
) -> Iterator[tuple[Any, str]]:
    """The app as `make run` starts it: the demo and its intent tree (the run's indexed copy, ``indexed_demo``:
    as the app finds them on every start after its first), the packaged model. Model steps get generous budgets:
    on a busy 2-core machine a routing or rewriting call can take minutes. The answers are cut short and not
    checked again by the model (``ANSWERS``): the test reads where each question searched, never the answer's
    words, and writing five whole answers on one core was most of its three minutes."""
    from ragapp.config import Settings
    from ragapp.engine.build import build_engine
    from ragapp.serve.server import start_server

    state = tmp_path_factory.mktemp("upload-routing-state")
    indexed_demo(state)
    settings = Settings(
        paths={"state_dir": state},
        workflow={"step_timeout_s": 600.0, "verify": ANSWERS["verify"]},
        llm={"timeout_s": 900.0, "threads": MODEL_THREADS, "max_tokens": ANSWERS["max_tokens"]},  # the worker's cores
    )
    engine = build_engine(settings, shared_models.parts(settings))  # the run's models, the local LLM's included
    server = start_server(engine, "127.0.0.1", _free_port())
    try:
        yield engine, server.url
    finally:
        server.close()
        engine.close()


def _ask(page: Any, engine: Any, question: str) -> Any:
    """Ask ``question`` in the page and return its request's trace, once the page is ready for the next one. The
    trace is written as the request ends, so it is what is waited for (a step bubble of the previous question
    is on the page already)."""
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")
    trace = _trace_of(engine, question)
    page.wait_for_function(
        "() => !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
        " && !document.querySelector('.generating')",
        timeout=WAIT_MS,
    )
    return trace


def _trace_of(engine: Any, question: str) -> Any:
    """The trace of the request that asked ``question`` (accounts are off: the local user sees all)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        for summary in engine.observability.traces("", everyone=True, kind="chat", limit=50):
            if summary.question == question:
                return engine.observability.trace(summary.id, "", everyone=True)
        time.sleep(2.0)
    raise AssertionError(f"no trace of {question!r} after {WAIT_MS / 60_000:.0f} minutes")


def _why(trace: Any) -> str:
    routes = "; ".join(f"{r.action} {[i.code for i in r.intents]} fit={r.fit} also={r.also}" for r in trace.routing)
    searched = [r.kbs for r in trace.retrievals]
    weak = [n.widened.added for n in trace.notices if n.widened is not None]
    prompt = sorted({c.source for c in trace.context})
    return f"routing: {routes}; widened when weak: {weak}; searched: {searched}; prompt: {prompt}"


def test_questions_about_an_upload_no_intent_covers_search_it(
    demo_app: tuple[Any, str], flex_pdf: Path, browser: Any, artifacts: Path
) -> None:
    engine, url = demo_app
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(url)
        page.locator("#question textarea").wait_for()

        page.get_by_role("tab", name="Knowledge").click()
        choose_files(page, flex_pdf)
        page.locator("#add-files").click()
        report = page.locator("#ingest-report")
        report.get_by_text(f"{UPLOAD}: added").wait_for(timeout=WAIT_MS)
        report.get_by_text("No intent searches default").wait_for()  # the upload says where it went

        page.get_by_role("tab", name="Chat").click()
        missed, seen = [], []
        for question in QUESTIONS:  # one chat: the follow-up leans on the question before it
            trace = _ask(page, engine, question)
            seen.append(f"{question!r}: {_why(trace)}")
            if UPLOAD not in {c.source for c in trace.context}:
                missed.append(seen[-1])
        # How each question reached the upload (fallback, fit too low, weak search): for whoever reads the run.
        (artifacts / "upload-routing.txt").write_text("\n".join(seen) + "\n", "utf-8")
        assert not missed, f"{len(missed)} of {len(QUESTIONS)} questions did not search the upload:\n" + "\n".join(
            missed
        )
    finally:
        context.close()
