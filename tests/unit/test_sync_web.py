"""A website source's rules, each on hand-built input: the site's scope, the address rule (SSRF), what a page
links to, a sitemap, the shape of generated links, the type a body is read as, and the words of its messages
(the engine's English and the UI's the same, every Chinese text there)."""

from __future__ import annotations

import gzip
import re

import pytest

from ragapp.core.said import CATALOGUE as SAID
from ragapp.sync.crawler import shape
from ragapp.sync.site_words import SITE_WORDS, caused_said, site_said
from ragapp.sync.sources import SyncError
from ragapp.sync.web_address import Scope, address_kind, normalise
from ragapp.sync.web_fetch import body_type
from ragapp.sync.web_links import page_links, read_sitemap
from ragapp.ui.said_words import said_text
from tests.text import shown

READABLE = {".html", ".htm", ".pdf", ".md", ".txt", ".csv", ".docx"}


def test_a_url_has_one_spelling() -> None:
    assert normalise("HTTP://Docs.Example.COM:80/a/b/../c.html#part") == "http://docs.example.com/a/c.html"
    assert normalise("https://h:443") == "https://h/"
    assert normalise("page.html?x=1#top", "https://h/docs/index.html") == "https://h/docs/page.html?x=1"
    for bad in ("ftp://h/x", "file:///etc/passwd", "javascript:alert(1)", "https://user:pw@h/", "mailto:a@b",
                "https://h:99999/", "https:///nohost", "https://h/" + "a" * 3000):  # fmt: skip
        assert normalise(bad) is None, bad


def test_the_scope_is_the_start_folder_on_one_host() -> None:
    scope = Scope.of("http://Docs.Example.com/manual/intro.html")
    assert (scope.start, scope.prefix) == ("http://docs.example.com/manual/intro.html", "/manual/")
    assert scope.contains("http://docs.example.com/manual/ch1/a.html")
    assert scope.contains("https://docs.example.com/manual/b.html")  # the same site upgraded to https
    assert not scope.contains("http://docs.example.com/other/b.html")
    assert not scope.contains("http://docs.example.com:8080/manual/b.html")
    assert not scope.contains("http://evil.example.com/manual/b.html")
    assert not scope.contains("http://docs.example.com.evil.net/manual/b.html")
    assert scope.relative("http://docs.example.com/manual/ch1/a.html?v=2") == "ch1/a.html?v=2"
    with pytest.raises(SyncError, match="not a website address"):
        Scope.of("file:///srv/handbook")


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"), ("::1", "loopback"), ("::ffff:127.0.0.1", "loopback"),
        ("169.254.169.254", "never"), ("fe80::1", "never"), ("0.0.0.0", "never"), ("224.0.0.1", "never"),
        ("10.1.2.3", "private"), ("192.168.0.7", "private"), ("fd00::1", "private"),
        ("93.184.215.14", "global"), ("2606:4700::1111", "global"),
    ],
)  # fmt: skip
def test_each_address_has_its_kind(address: str, kind: str) -> None:
    assert address_kind(address) == kind


def test_a_pages_links_follow_base_and_robots_rules() -> None:
    markup = (
        "<base href='/docs/v2/'><a href='intro.html#top'>Intro</a><a href='https://other.org/x'>x</a>"
        "<a rel='nofollow' href='login.html'>Log in</a><a href='mailto:a@b.c'>mail</a><area href='map.html'>"
        "<iframe src='frame.html'></iframe><a href='intro.html'>again</a>"
    )
    found = page_links(markup, "https://h/docs/index.html")
    assert found.links == ("https://h/docs/v2/intro.html", "https://other.org/x", "https://h/docs/v2/map.html",
                           "https://h/docs/v2/frame.html")  # fmt: skip
    assert not found.noindex
    closed = page_links("<meta name='robots' content='noindex, nofollow'><a href='a.html'>a</a>", "https://h/")
    assert closed.noindex and closed.nofollow and closed.links == ()


def test_a_sitemap_lists_pages_or_sitemaps_plain_or_gzipped() -> None:
    urlset = (b"<?xml version='1.0'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
              b"<url><loc>https://h/a.html</loc></url><url><loc> https://h/b.html </loc></url></urlset>")  # fmt: skip
    assert read_sitemap(urlset, "https://h/sitemap.xml").urls == ("https://h/a.html", "https://h/b.html")
    index = b"<sitemapindex><sitemap><loc>https://h/s1.xml</loc></sitemap></sitemapindex>"
    found = read_sitemap(gzip.compress(index), "https://h/sitemap.xml.gz")
    assert found.index and found.urls == ("https://h/s1.xml",)
    with pytest.raises(ValueError, match="not <urlset>"):
        read_sitemap(b"<html><body>hello</body></html>", "https://h/sitemap.xml")
    with pytest.raises(ValueError, match="unpacks to more than"):
        read_sitemap(gzip.compress(b"<urlset>" + b" " * (60 * 1024 * 1024)), "https://h/sitemap.xml.gz")


def test_generated_links_share_a_shape_and_real_pages_do_not() -> None:
    calendar = {shape(f"https://h/cal/{y}-{m:02}/?view=month&day={d}") for y in (2023, 2024) for m in range(1, 13)
                for d in (1, 15)}  # fmt: skip
    assert calendar == {"/cal/#-#/?day&view"}
    pages = {shape(f"https://h/manual/{name}.html") for name in ("intro", "install", "usage")}
    assert len(pages) == 3


def test_a_body_is_read_by_its_content_type_or_else_its_name() -> None:
    assert body_type("text/html; charset=iso-8859-1", "https://h/page.php", READABLE) == "html"
    assert body_type("application/pdf", "https://h/get?id=3", READABLE) == "pdf"
    assert body_type("application/octet-stream", "https://h/guide.docx", READABLE) == "docx"
    assert body_type("text/plain", "https://h/notes.md", READABLE) == "md"
    assert body_type("image/gif", "https://h/logo.html", READABLE) is None
    assert body_type("application/zip", "https://h/a.zip", READABLE) is None


def test_the_engine_and_the_ui_say_a_websites_news_in_the_same_words() -> None:
    for code, english in SITE_WORDS.items():
        assert code in SAID, f"the UI has no words for {code}"
        assert SAID[code][0] == english, code
        chinese = SAID[code][1]
        assert set(_fields(chinese)) == set(_fields(english)), code
    inner, cause = site_said("web.timeout", url="http://h/", seconds="2")
    reason, said = caused_said("web.start", cause, reason=inner)
    assert reason.startswith("the start page could not be read: http://h/: no complete answer within 2 s")
    words = said_text(said, str)
    assert words is not None and shown(words, "zh") == (
        "无法读取起始页：http://h/：2 秒内没有得到完整的回应（RAGAPP_SYNC__WEB_REQUEST_TIMEOUT_S）；保留原有内容，"
        "下次同步时重试"
    )
    assert shown(words, "en") == reason


@pytest.mark.parametrize("code", sorted(SITE_WORDS))
def test_a_websites_news_in_chinese_holds_no_english(code: str) -> None:
    values = {field: 7 for field in _fields(SITE_WORDS[code])}
    chinese = SAID[code][1].format(**values)
    words = re.sub(r"RAGAPP_\w+|robots\.txt|docs/security\.md|RFC|robots noindex|Git|MB", "", chinese)
    assert not re.search(r"[A-Za-z]{2,}", words), chinese


def _fields(template: str) -> list[str]:
    import string

    return [field for _text, field, _spec, _conv in string.Formatter().parse(template) if field]
