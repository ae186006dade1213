"""One-off (issue 53): a web page's own text kept and its site-wide frame left out, our HTML parser against
trafilatura, on Debian's installed HTML manuals. Not a living benchmark: its figures are in docs/documents.md
with the commit that measured them, and this file goes after that commit.

A page's units are the lines of its body's text (BeautifulSoup, scripts and styles out, three word characters at
least). A unit found on 30 % or more of its tree's pages (3 at least) is the site's frame (menus, headers,
footers); the others are the page's own text. A unit is kept when its whitespace-normalised text is in what the
extractor gave (trafilatura's HTML output read back to text, so that its headings count).

    python3.11 -m venv --system-site-packages /tmp/tv && /tmp/tv/bin/pip install trafilatura==2.3.1 lxml_html_clean
    PYTHONPATH=.:.venv/lib/python3.11/site-packages /tmp/tv/bin/python -m ragbench.main_content
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bs4 import BeautifulSoup

from ragapp.ingest.parsers.base import decode_text
from ragapp.ingest.parsers.html_text import html_sections

TREES = ("flex-doc/html", "sqlite3", "libxslt1-dev/html", "nodejs/api", "maint-guide-zh-cn/html", "libffi-dev/html",
         "git-doc")  # fmt: skip
HELD_OUT = ("python-policy", "zlib_how", "valgrind")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _units(markup: str) -> list[str]:
    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "head"]):
        tag.decompose()
    lines = (_norm(line) for line in (soup.body or soup).get_text("\n").split("\n"))
    return [line for line in lines if len(re.findall(r"\w", line)) >= 3]


def ours(markup: str) -> str:
    return "\n".join(f"{s.heading or ''}\n{s.text}" for s in html_sections(markup).sections)


def trafilatura_html(markup: str) -> str:
    import trafilatura

    out = trafilatura.extract(markup, output_format="html", include_tables=True, favor_recall=True) or ""
    return BeautifulSoup(out, "html.parser").get_text("\n")


def measure(tree: Path, pages: int, extractors: dict[str, Callable[[str], str]]) -> None:
    files = sorted(p for p in tree.rglob("*.htm*") if not any(h in str(p).lower() for h in HELD_OUT))
    random.Random(0).shuffle(files)
    markups = [decode_text(p.read_bytes()) for p in files[:pages]]
    units = [_units(m) for m in markups]
    seen_on = Counter(u for page in units for u in set(page))
    frame_at = max(3, 0.3 * len(markups))
    print(f"{tree} ({len(markups)} pages)")
    for name, extract in extractors.items():
        start = time.perf_counter()
        outs = [_norm(extract(m)) for m in markups]
        per_page_ms = (time.perf_counter() - start) / max(len(markups), 1) * 1000
        kept: dict[bool, float] = {True: 0, False: 0}
        total = {True: 0, False: 0}
        for page, out in zip(units, outs, strict=True):
            for unit in page:
                frame = seen_on[unit] >= frame_at
                total[frame] += len(unit)
                kept[frame] += len(unit) * (unit in out)
        own, framing = (kept[f] / max(total[f], 1) for f in (False, True))
        print(f"  {name:12s} own text kept {own:6.1%}  frame kept {framing:6.1%}  {per_page_ms:6.1f} ms/page")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=60, help="pages per tree (a fixed random sample)")
    p.add_argument("--root", type=Path, default=Path("/usr/share/doc"))
    args = p.parse_args()
    for tree in TREES:
        if (args.root / tree).is_dir():
            measure(args.root / tree, args.pages, {"ours": ours, "trafilatura": trafilatura_html})


if __name__ == "__main__":
    main()
