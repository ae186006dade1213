"""What a page links to, and what a sitemap lists: the crawl's next pages.

Links are read with the standard library's streaming ``HTMLParser`` (the page's text is read separately, by the
ingest's parser): ``<a href>``, ``<area href>`` and frames, against ``<base href>``; a link marked
``rel="nofollow"`` is not taken, nor any link of a page whose robots meta says ``nofollow``. A page holds at most
``MAX_LINKS`` links that count (past that it is a link farm, not a manual page).
"""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from xml.etree import ElementTree

from ragapp.sync.web_address import normalise

MAX_LINKS = 2000
MAX_SITEMAP_URLS = 50_000  # the sitemap protocol's own limit per file
MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # and its size limit, unpacked


@dataclass(frozen=True)
class PageLinks:
    """A page's links (absolute, normalised, in order, each once) and what its robots meta asks."""

    links: tuple[str, ...]
    noindex: bool = False
    nofollow: bool = False


class _Links(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.found: dict[str, None] = {}
        self.noindex = self.nofollow = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "base" and found.get("href"):
            self.base = normalise(found["href"], self.base) or self.base
        elif tag == "meta" and found.get("name", "").lower() in ("robots", "ragapp"):
            words = {w.strip() for w in found.get("content", "").lower().split(",")}
            self.noindex |= bool(words & {"noindex", "none"})
            self.nofollow |= bool(words & {"nofollow", "none"})
        else:
            target = found.get("src" if tag in ("frame", "iframe") else "href")
            if target is None or tag not in ("a", "area", "frame", "iframe"):
                return
            if "nofollow" in found.get("rel", "").lower().split() or len(self.found) >= MAX_LINKS:
                return
            url = normalise(target, self.base)
            if url is not None:
                self.found[url] = None

    def updatepos(self, i: int, j: int) -> int:  # line numbers are never read: a tenth of the parse saved
        return j


def page_links(markup: str, url: str) -> PageLinks:
    """The links of the HTML page ``markup`` found at ``url``."""
    parser = _Links(url)
    parser.feed(markup)
    parser.close()
    links = () if parser.nofollow else tuple(parser.found)
    return PageLinks(links, parser.noindex, parser.nofollow)


@dataclass(frozen=True)
class Sitemap:
    """A sitemap's URLs: pages (``<urlset>``) or, for an index, more sitemaps (``<sitemapindex>``)."""

    urls: tuple[str, ...]
    index: bool = False


def read_sitemap(data: bytes, url: str) -> Sitemap:
    """The URLs of the sitemap ``data`` (XML, or gzipped XML) found at ``url``.

    Raises:
        ValueError: not a sitemap (the message says why).
    """
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data)
    urls: dict[str, None] = {}
    root_tag = ""
    try:
        for event, element in ElementTree.iterparse(io.BytesIO(data), events=("start", "end")):
            tag = element.tag.rsplit("}", 1)[-1]
            if event == "start":
                root_tag = root_tag or tag
                continue
            if tag == "loc" and element.text and len(urls) < MAX_SITEMAP_URLS:
                found = normalise(element.text, url)
                if found is not None:
                    urls[found] = None
            element.clear()
    except ElementTree.ParseError as exc:
        raise ValueError(f"not XML ({exc})") from None
    if root_tag not in ("urlset", "sitemapindex"):
        raise ValueError(f"an XML file whose root is <{root_tag or '?'}>, not <urlset> or <sitemapindex>")
    return Sitemap(tuple(urls), root_tag == "sitemapindex")


def _gunzip(data: bytes) -> bytes:
    """``data`` unpacked, no further than ``MAX_SITEMAP_BYTES`` (a small file may unpack into gigabytes)."""
    try:
        unpacker = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        out = unpacker.decompress(data, MAX_SITEMAP_BYTES + 1)
    except (zlib.error, gzip.BadGzipFile) as exc:
        raise ValueError(f"not a readable gzip file ({exc})") from None
    if len(out) > MAX_SITEMAP_BYTES:
        raise ValueError(f"it unpacks to more than {MAX_SITEMAP_BYTES // 2**20} MB")
    return out
