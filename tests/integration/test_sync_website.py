"""A knowledge base following a website served on loopback by Python's own HTTP server: a real manual from
Debian's installed documentation (libffi's HTML), and small sites written to show one rule each. The first crawl
makes every page a document named by its URL, searchable, filterable and cited with a link to the live page; a
re-crawl asks each page once, conditionally, and reads only what changed; a page gone leaves; redirects, robots
rules, noindex pages, linked files and sitemaps are as docs/sync.md says."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.events import AnswerEvent
from ragapp.core.filters import DocumentFilter
from tests.integration.web_site import Site, manual_copy, reply, serving

pytestmark = pytest.mark.integration

QUIET = {"sync": {"enabled": False, "web_delay_s": 0.0}}  # only the crawls a test asks for
FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture
def manual(tmp_path: Path) -> Iterator[Site]:
    """libffi's manual (Debian's libffi-dev), served under /ffi/, with a page outside the followed folder."""
    root = tmp_path / "site"
    if not manual_copy("libffi-dev/html", root / "ffi"):
        pytest.skip("libffi-dev's HTML manual is not installed (apt-get install libffi-dev)")
    (root / "elsewhere.html").write_text("<h1>Not the manual</h1><p>Outside the followed folder.</p>", "utf-8")
    with serving(root) as site:
        yield site


def documents(rig: Any, kb: str = "ffi") -> dict[str, Any]:
    return {d.name: d for d in rig.engine.library.documents() if d.kb == kb}


def page_requests(site: Site) -> dict[str, int]:
    return {path: n for path, n in site.counts().items() if path != "/robots.txt"}


def test_a_manual_is_crawled_searchable_cited_and_kept_in_step(make_engine: Callable[..., Any], manual: Site) -> None:
    rig = make_engine(**QUIET)
    start = f"{manual.url}/ffi/index.html"
    rig.engine.sync.add("ffi", "web", start, "ffi", start=False)
    first = rig.engine.sync.run("ffi")
    report = first.report
    assert first.state == "idle" and report is not None, report
    pages = sorted(p.name for p in (manual.root / "ffi").iterdir())
    wanted = sorted(f"{manual.url}/ffi/{name}" for name in pages)
    assert sorted(documents(rig)) == wanted and sorted(report.added) == wanted
    assert (report.error, report.stopped, report.refused) == ("", "", [])
    assert report.requests == len(pages) + 1  # each page once, and robots.txt
    assert "/elsewhere.html" not in manual.counts()  # outside the folder: never asked
    assert {h["user-agent"] for h in manual.headers} == {"ragapp-sync/1 (knowledge-base crawler)"}

    basics = documents(rig)[f"{manual.url}/ffi/The-Basics.html"]
    view = rig.engine.library.document_view(basics.doc_id)
    assert view.meta["title"].startswith("The Basics") and view.meta["source"] == "ffi"
    assert view.meta["path"] == basics.name and view.meta["changed"]  # the URL, and when it was fetched
    where = DocumentFilter(source="ffi", path_prefix=f"{manual.url}/ffi/The-")
    found = rig.engine.chat.retrieve("How is ffi_prep_cif used to prepare a call interface?", where=where)
    assert found.chunks and found.chunks[0].chunk.source == basics.name

    rig.llm.enqueue("Call ffi_prep_cif to initialize the cif before ffi_call [1].")
    events = list(rig.engine.chat.ask("How is ffi_prep_cif used to prepare a call interface?", where=where))
    answer = next(e for e in events if isinstance(e, AnswerEvent))
    cited = answer.citations[0].chunk
    assert cited.source == basics.name
    shown = rig.engine.library.page_view(cited.chunk_id)
    assert shown.url == basics.name and shown.section  # its text in the panel, and the live page's address

    manual.clear()
    again = rig.engine.sync.run("ffi").report
    assert again is not None and (again.unchanged, again.hashed, again.ingested) == (len(pages), 0, 0)
    assert again.requests == len(pages) + 1 and max(page_requests(manual).values()) == 1
    assert all(h.get("if-none-match") for h in manual.headers[1:])  # each page asked "changed since?"

    (manual.root / "ffi" / "Thread-Safety.html").unlink()
    for name in ("Types.html", "Multiple-ABIs.html"):
        page = manual.root / "ffi" / name
        page.write_text(page.read_text("utf-8").replace("</body>", "<p>Revised for libffi 4.</p></body>"), "utf-8")
    manual.clear()
    third = rig.engine.sync.run("ffi").report
    assert third is not None, third
    assert sorted(third.updated) == [f"{manual.url}/ffi/Multiple-ABIs.html", f"{manual.url}/ffi/Types.html"]
    assert third.removed == [f"{manual.url}/ffi/Thread-Safety.html"] and third.ingested == 2
    assert max(page_requests(manual).values()) == 1 and third.requests <= len(pages) + 1
    assert f"{manual.url}/ffi/Thread-Safety.html" not in documents(rig)


def _site(root: Path, pages: dict[str, str]) -> None:
    for rel, text in pages.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def _page(title: str, body: str, links: tuple[str, ...] = ()) -> str:
    anchors = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
    head = f"<html><head><title>{title}</title></head>"
    return f"{head}<body><h1>{title}</h1><p>{body}</p><ul>{anchors}</ul></body></html>"


def test_redirects_robots_noindex_and_linked_files_follow_the_rules(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    root = tmp_path / "site"
    links = ("moved.html", "loop-a.html", "away.html", "private/secret.html", "quiet.html", "guide.pdf", "logo.zip")
    _site(root, {
        "docs/index.html": _page("Kettle handbook", "The kettle boils water in three minutes.", links),
        "docs/new-home.html": _page("Descaling", "Descale the kettle monthly with citric acid."),
        "docs/private/secret.html": _page("Secret", "The vault code is 1234."),
        "docs/quiet.html": "<meta name='robots' content='noindex'>" + _page("Drafts", "A draft nobody should find."),
        "robots.txt": "User-agent: *\nDisallow: /docs/private/\n",
    })  # fmt: skip
    shutil.copyfile(FIXTURES / "sample.pdf", root / "docs" / "guide.pdf")
    with serving(root) as site:
        site.routes["/docs/moved.html"] = reply(301, Location="/docs/new-home.html")
        site.routes["/docs/loop-a.html"] = reply(302, Location="/docs/loop-b.html")
        site.routes["/docs/loop-b.html"] = reply(302, Location="/docs/loop-a.html")
        site.routes["/docs/away.html"] = reply(302, Location="http://169.254.169.254/latest/meta-data/")
        rig = make_engine(**QUIET)
        rig.engine.sync.add("kettle", "web", f"{site.url}/docs/index.html", "kettle", start=False)
        report = rig.engine.sync.run("kettle").report
        assert report is not None and not report.error, report
        names = sorted(documents(rig, "kettle"))
        assert names == [f"{site.url}/docs/{n}" for n in ("guide.pdf", "index.html", "new-home.html")]
        refused = {r.said.code: r for r in report.refused if r.said is not None}
        assert refused["web.redirect_loop"].path.endswith("/docs/loop-a.html")
        assert refused["web.off_site"].said.values["target"] == "http://169.254.169.254/latest/meta-data/"
        assert refused["web.noindex"].path.endswith("/docs/quiet.html")
        assert refused["web.robots"].said.values["count"] == 1
        asked = site.counts()
        assert "/docs/private/secret.html" not in asked and "/docs/logo.zip" not in asked

        # The links to the PDF and the draft go: they leave with them; the moved page's new home stays.
        _site(root, {"docs/index.html": _page("Kettle handbook", "The kettle boils water.", ("moved.html",)),
                     "robots.txt": "User-agent: *\nDisallow: /docs/private/\n"})  # fmt: skip
        again = rig.engine.sync.run("kettle").report
        assert again is not None and again.removed == [f"{site.url}/docs/{n}" for n in ("guide.pdf", "quiet.html")]
        assert sorted(documents(rig, "kettle")) == [f"{site.url}/docs/index.html", f"{site.url}/docs/new-home.html"]


def test_robots_crawl_delay_spaces_every_request_even_a_redirect(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    # Apart from the rules above so that only a few requests wait out the delay (a second each, robots.txt's least).
    root = tmp_path / "site"
    _site(root, {
        "docs/index.html": _page("Kettle handbook", "The kettle boils water in three minutes.", ("moved.html",)),
        "docs/new-home.html": _page("Descaling", "Descale the kettle monthly with citric acid."),
        "robots.txt": "User-agent: *\nCrawl-delay: 1\n",
    })  # fmt: skip
    with serving(root) as site:
        site.routes["/docs/moved.html"] = reply(301, Location="/docs/new-home.html")
        rig = make_engine(**QUIET)
        rig.engine.sync.add("kettle", "web", f"{site.url}/docs/index.html", "kettle", start=False)
        report = rig.engine.sync.run("kettle").report
        assert report is not None and not report.error, report
        assert sorted(documents(rig, "kettle")) == [f"{site.url}/docs/{n}" for n in ("index.html", "new-home.html")]
        assert set(site.counts()) == {"/robots.txt", "/docs/index.html", "/docs/moved.html", "/docs/new-home.html"}
        gaps = [later - earlier for earlier, later in zip(site.times, site.times[1:], strict=False)]
        # The delay between any two requests (a redirect's too). The times are the server thread's, which a loaded
        # machine schedules late by up to a tenth of a second or more (0.88 s seen at load 9); with no delay obeyed
        # the gaps are milliseconds.
        assert len(gaps) == 3 and min(gaps) >= 0.7


def test_a_sitemap_starts_the_crawl_and_the_command_line_follows_a_site(
    make_settings: Callable[..., Any], tmp_path: Path
) -> None:
    root = tmp_path / "site"
    _site(root, {
        "docs/a.html": _page("Alpha", "Alpha is the first robot."),
        "docs/b/b.html": _page("Beta", "Beta is the second robot."),
        "docs/sitemap.xml": "<urlset><url><loc>a.html</loc></url><url><loc>b/b.html</loc></url>"
                            "<url><loc>/other/c.html</loc></url></urlset>",
    })  # fmt: skip
    settings = make_settings(**QUIET)
    env = {**os.environ, "RAGAPP_PATHS__STATE_DIR": str(settings.paths.state_dir), "RAGAPP_PATHS__LOAD_DEMO": "false"}
    with serving(root) as site:

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "ragapp.sync", *args], env=env, capture_output=True,
                                  text=True, timeout=600)  # fmt: skip

        added = cli("add", "robots", "--web", f"{site.url}/docs/sitemap.xml", "--kb", "robots")
        assert added.returncode == 0, added.stderr
        ran = cli("--json", "run", "robots")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        report = json.loads(ran.stdout)["report"]
        assert sorted(report["added"]) == [f"{site.url}/docs/a.html", f"{site.url}/docs/b/b.html"]
        assert "/other/c.html" not in site.counts()  # listed, but outside the sitemap's folder
        refused = cli("add", "bad", "--web", "file:///etc/passwd", "--kb", "bad")
        assert refused.returncode == 2 and "not a website address" in refused.stderr
        site.clear()
        quiet = cli("run", "robots")
        assert quiet.returncode == 0 and "0 added" in quiet.stdout and "2 unchanged" in quiet.stdout
        assert site.counts()["/docs/sitemap.xml"] == 1 and max(site.counts().values()) == 1


def test_a_site_that_cannot_be_read_fails_with_its_reason_and_says_it_in_both_languages(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    from ragapp.ui.sources import report_markdown
    from tests.text import shown

    root = tmp_path / "site"
    _site(root, {"docs/index.html": _page("Down", "Never seen.")})
    with serving(root) as site:
        site.routes["/docs/index.html"] = reply(503, b"maintenance")
        rig = make_engine(**QUIET)
        rig.engine.sync.add("down", "web", f"{site.url}/docs/index.html", "down", start=False)
        out = rig.engine.sync.run("down")
    assert out.state == "failed" and out.report is not None
    assert out.report.error == (f"the start page could not be read: {site.url}/docs/index.html: the server answered "
                                "503; kept as it was, tried again at the next sync")  # fmt: skip
    (status,) = rig.engine.sync.sources()
    markdown = report_markdown(status)
    assert "无法读取起始页" in shown(markdown, "zh") and "服务器返回 503" in shown(markdown, "zh")
    assert "could not" not in shown(markdown, "zh") and "the server answered 503" in shown(markdown, "en")


MANUALS = {"flex": ("flex-doc/html", "index.html"), "ffi": ("libffi-dev/html", "index.html"),
           "maint": ("maint-guide-zh-cn/html", "index.zh-cn.html")}  # fmt: skip


@pytest.mark.slow
def test_a_two_hundred_page_site_is_crawled_cited_and_recrawled_for_its_changes(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    """Three of Debian's manuals under one site (flex's, libffi's and the Chinese New Maintainers' Guide: 204
    pages linked from their start pages; flex's 49 redirection stubs are linked from nowhere), and a home page
    linking the three. A crawl's pages are searchable by keywords as soon as they are stored, their vectors
    follow in the background (the app's default, ``enrich.background``): the base's enrichment is paused here,
    so the answer and the search below come from the keywords a crawl promises first (embedding 200 pages'
    chunks took nine tenths of this test's minutes; the vectors' own tests are in test_enrichment.py). The
    app's reranker judges the passages, as by default: the channel-score gate wants a vector match."""
    root = tmp_path / "site"
    for folder, (package, _start) in MANUALS.items():
        if not manual_copy(package, root / folder):
            pytest.skip(f"/usr/share/doc/{package} is not installed")
    links = "".join(f'<li><a href="{folder}/{start}">{folder}</a></li>' for folder, (_p, start) in MANUALS.items())
    (root / "index.html").write_text(f"<html><body><h1>Manuals</h1><ul>{links}</ul></body></html>", "utf-8")
    rig = make_engine(**QUIET, enrich={"background": True}, rerank={"backend": "builtin"})
    rig.engine.enrichment.pause("manuals")  # no vectors: the keywords alone, before a page is stored
    with serving(root) as site:
        rig.engine.sync.add("manuals", "web", f"{site.url}/index.html", "manuals", start=False)
        first = rig.engine.sync.run("manuals").report
        assert first is not None and not first.error and not first.stopped, first
        named = documents(rig, "manuals")
        assert len(named) >= 200 + 1 and len(first.added) == len(named)
        vectors = rig.engine.enrichment.progress("manuals").steps[0]
        assert vectors.step == "vectors" and vectors.done == 0 and vectors.total > len(named)
        question = "What is the file flex writes its scanner to, and what is the scanning routine called?"
        # Every model call gets the answer (a reply its check finds unsupported is written again).
        rig.llm.reply_with(lambda _messages: "flex writes lex.yy.c, whose scanning routine is yylex() [1].")
        where = DocumentFilter(path_prefix=f"{site.url}/flex/")
        answer = next(e for e in rig.engine.chat.ask(question, where=where) if isinstance(e, AnswerEvent))
        rig.llm.reply_with(None)
        cited = answer.citations[0].chunk
        assert cited.source.startswith(f"{site.url}/flex/") and "yylex" in cited.text
        assert rig.engine.library.page_view(cited.chunk_id).url == cited.source
        found = rig.engine.chat.retrieve("如何检查软件包的错误", where=DocumentFilter(path_prefix=f"{site.url}/maint/"))
        assert found.chunks  # the Chinese manual is searchable too

        changed = ["flex/Patterns.html", "flex/Matching.html", "flex/Actions.html", "ffi/Types.html",
                   "maint/checkit.zh-cn.html"]  # fmt: skip
        for rel in changed:
            page = root / rel
            page.write_text(page.read_text("utf-8").replace("</body>", "<p>Revised.</p></body>"), "utf-8")
        site.clear()
        again = rig.engine.sync.run("manuals").report
    assert again is not None and sorted(again.updated) == sorted(f"{site.url}/{rel}" for rel in changed), again
    assert again.ingested == 5 and again.unchanged == len(named) - 5 and not again.removed
    assert again.requests == first.requests and max(page_requests(site).values()) == 1  # a page (or a 404) once
