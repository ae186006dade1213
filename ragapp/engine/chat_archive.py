"""All of one person's chats in a zip: per chat a Markdown file and a JSON file (``ragapp.engine.chat_export``),
and an index of them (``index.md`` to read, ``index.json`` to process).

File names come from the chats' titles, which users type: each is cut down to letters and digits of any script
(a Chinese title stays Chinese) joined by dashes, never a folder, a dot file or a name Windows reserves, at most
``STEM_CHARS`` characters, after the chat's date; two chats of the same title and day get ``-2``, ``-3``.
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
import zipfile
from collections.abc import Iterable
from datetime import UTC, datetime

from ragapp.engine.chat_export import ChatExport, escaped, to_json, to_markdown
from ragapp.engine.saved_conversation import SavedConversation

STEM_CHARS = 60
INDEX_FORMAT = "ragapp.conversations"
_NOT_A_WORD = re.compile(r"[^\w]+")
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def safe_stem(title: str, fallback: str = "chat") -> str:
    """``title`` as a file name's stem: letters and digits of any script joined by dashes ("../etc/passwd" gives
    "etc-passwd", "电池 能用多久？" gives "电池-能用多久"), cut to ``STEM_CHARS``; ``fallback`` when nothing is left."""
    words = _NOT_A_WORD.sub("-", unicodedata.normalize("NFKC", title)).replace("_", "-")
    stem = re.sub(r"-{2,}", "-", words).strip("-")[:STEM_CHARS].rstrip("-")
    return fallback if not stem or stem.lower() in _RESERVED else stem


def download_name(title: str, suffix: str, when: str = "") -> str:
    """A file name for one chat: '2026-12-03-How-long-does-the-battery-last.md'."""
    day = when[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", when[:10]) else ""
    return f"{day + '-' if day else ''}{safe_stem(title)}{suffix}"


def unique_names(stems: Iterable[str]) -> list[str]:
    """The stems with a ``-2``, ``-3``... on each repeat (compared as a case-insensitive file system would)."""
    taken: set[str] = set()
    out = []
    for stem in stems:
        name, n = stem, 1
        while name.casefold() in taken:
            n += 1
            name = f"{stem}-{n}"
        taken.add(name.casefold())
        out.append(name)
    return out


def archive(chats: list[SavedConversation], exported_at: str | None = None) -> ChatExport:
    """The chats (the latest first) as one zip, with its index; ``count`` says how many it holds."""
    now = exported_at or datetime.now(UTC).isoformat(timespec="seconds")
    stems = unique_names(download_name(c.title, "", c.updated_at) for c in chats)
    listed = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for chat, stem in zip(chats, stems, strict=True):
            zipped.writestr(f"{stem}.md", to_markdown(chat))
            zipped.writestr(f"{stem}.json", to_json(chat, now))
            listed.append({"id": chat.id, "title": chat.title, "updated_at": chat.updated_at,
                           "markdown": f"{stem}.md", "json": f"{stem}.json"})  # fmt: skip
        index = {"format": INDEX_FORMAT, "version": 1, "exported_at": now, "conversations": listed}
        zipped.writestr("index.json", json.dumps(index, ensure_ascii=False, indent=2) + "\n")
        zipped.writestr("index.md", _index_markdown(listed, now))
    day = now[:10]
    return ChatExport(f"ragapp-chats-{day}.zip", "application/zip", buffer.getvalue(), len(chats))


def _index_markdown(listed: list[dict[str, str]], now: str) -> str:
    lines = ["# ragapp chats", "", f"*Exported {now} · {len(listed)} chats*", ""]
    lines += [f"- {escaped(c['title'])} ({c['updated_at'][:10]}): [{c['markdown']}](<{c['markdown']}>), "
              f"[{c['json']}](<{c['json']}>)" for c in listed]  # fmt: skip
    if not listed:
        lines.append("No saved chats.")
    return "\n".join(lines) + "\n"
