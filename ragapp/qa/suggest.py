"""The next questions offered under an answer: the headings of the sections beside the cited ones, each turned
into a question by a fixed rule. No model call (the answer has ended; the buttons must come at once).

The rule, in order:
1. Only under an answer that rests on passages: grounded, not abstained, with citations.
2. Candidates are the chunks within ``WINDOW`` of each cited chunk in its document (the first citation's
   neighbours first, nearest first, the one after before the one before), each section once.
3. A section the answer cites is left out (the answer just said what it holds), and so is one whose topic the
   question (or an earlier one of the chat) already names, one in the other language than the question's, a
   heading that holds no subject ("Contents", "Notes", "目录"...), and the document's title section (the root
   of the sections' heading paths, or the one-level heading the document opens with: a question about it would
   find them all) unless a question was written for it (step 5).
4. A section offered must be able to answer its question: its text has at least ``MIN_WORDS`` words (or
   ``MIN_CJK`` Chinese characters) under the heading; the heading itself is indexed with the chunk, so the
   question's words find the section.
5. A question written for the section's chunk at ingest (``ragapp.enrich.questions``, when it is on), in the
   question's language, is offered as it was written; else the heading ``Title > ... > Topic`` becomes
   (numbering like "2." and a trailing "(...)" dropped from the topic): the topic itself when it is already a
   question ("How to ...", "What is ...", "如何..."); else "What does the <Title> say about <topic>?"
   ("<Title>中关于“<topic>”是怎么说的？"); "What do the documents say about <topic>?" when the section has no
   parent heading (or the title makes the question too long).
At most ``LIMIT`` questions; none when nothing fits.

The first screen offers questions the same way (``opening_questions``): from the first sections of the newest
documents the user may read, before anything is asked; a document's written questions come before its headings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from ragapp.core.events import AnswerEvent, Suggestion
from ragapp.core.lang import is_chinese
from ragapp.core.types import Chunk

LIMIT = 3
OPENING = 4  # on the first screen, beside the demo's examples
WINDOW = 6  # chunks on each side of a cited one: enough to reach the sections around a long one
MIN_WORDS = 8
MIN_CJK = 16
MAX_CHARS = 120  # a longer question drops the document's title

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBERING = re.compile(r"^\s*(?:(?:chapter|section|part)\s+)?(?:\d+(?:\.\d+)*|[ivxlc]+)[.):]?\s+", re.IGNORECASE)
_CJK_NUMBERING = re.compile(r"^\s*(?:第[一二三四五六七八九十百\d]+[章节部分条]|[一二三四五六七八九十]+[、.．])\s*")
_TRAILING = re.compile(r"\s*[(（][^()（）]*[)）]\s*$|[\s:：.。,，;；]+$")
_ASKING_EN = re.compile(
    r"^(?:(?:how|what|why|when|where|which|who)\s+(?:to|is|are|was|were|do|does|did|can|could|should|will)"
    r"|can|do|does|is|are|should)\b",
    re.IGNORECASE,
)
_ASKING_ZH = re.compile(r"^(?:如何|怎么|怎样|为什么|为何|什么|哪)|[吗呢？?]$")
_NO_SUBJECT = {
    "contents", "table of contents", "index", "notes", "note", "references", "appendix", "glossary", "about",
    "overview", "introduction", "summary", "see also", "目录", "索引", "附录", "注释", "参考", "参考文献", "概述",
    "简介", "前言", "说明", "other", "others", "miscellaneous", "general", "其他", "其它",
}  # fmt: skip
_STOP = {
    "the", "a", "an", "of", "to", "and", "or", "in", "on", "for", "with", "your", "my", "how", "what", "is", "are",
    "do", "does", "can", "i", "it", "its", "this", "that", "about", "say", "says",
}  # fmt: skip

Window = Callable[[str, int], Sequence[Chunk]]  # (chunk id, chunks each side) -> the chunks around it, in order
# (chunk ids, Chinese?) -> the questions written at ingest for those chunks that have some, in that language
Written = Callable[[Sequence[str], bool], Mapping[str, Sequence[str]]]


def _none_written(_ids: Sequence[str], _chinese: bool) -> Mapping[str, Sequence[str]]:
    return {}


def suggested(
    question: str,
    answer: AnswerEvent | None,
    window: Window,
    limit: int = LIMIT,
    before: Sequence[str] = (),
    written: Written = _none_written,
) -> tuple[Suggestion, ...]:
    """The next questions to offer under ``answer`` to ``question`` (rule in the module's docstring);
    ``window`` reads a cited chunk's neighbours from the catalog; ``before``: the chat's earlier questions, whose
    topics count as named too; ``written`` reads the questions written at ingest."""
    if answer is None or not answer.grounded or answer.abstained or not answer.citations:
        return ()
    chinese = is_chinese(question)
    asked = [_folded(q) for q in (question, *before)]
    cited = {c.chunk.chunk_id for c in answer.citations}
    cited_headings = {c.chunk.heading or "" for c in answer.citations}
    seen: set[str] = set()
    found: list[Suggestion] = []
    for citation in answer.citations:
        chunk = citation.chunk
        around = window(chunk.chunk_id, WINDOW)
        titles = _titles(around)
        by_chunk = written([c.chunk_id for c in around], chinese)
        for near in _nearest_first(chunk, around):
            heading = near.heading or ""
            if near.chunk_id in cited or heading in cited_headings or heading in seen:
                continue
            own = _written_first(by_chunk.get(near.chunk_id, ()), asked)
            if own is None and heading in titles:
                continue
            seen.add(heading)
            text = own or question_of(heading, chinese)
            if text is None or not answers(near) or any(_already_asked(heading, q) for q in asked):
                continue
            found.append(Suggestion(text, near.chunk_id))
            if len(found) >= limit:
                return tuple(found)
    return tuple(found)


def opening_questions(
    documents: Iterable[Sequence[Chunk]],
    chinese: bool,
    limit: int = OPENING,
    per_document: int = 2,
    written: Written = _none_written,
) -> list[str]:
    """Questions a knowledge base answers, for its first screen before anything is asked: the headings of each
    document's sections in reading order (``documents``: each one's first chunks, in the order to offer them),
    by the same rule (step 3's leaving out, step 4's test, step 5's wording), at most ``per_document`` of each."""
    found: list[str] = []
    for chunks in documents:
        titles = _titles(chunks)
        by_chunk = written([c.chunk_id for c in chunks], chinese)
        seen: set[str] = set()
        taken = 0
        for chunk in chunks:
            heading = chunk.heading or ""
            own = _written_first(by_chunk.get(chunk.chunk_id, ()), found)
            if heading in seen or (own is None and heading in titles):
                continue
            seen.add(heading)
            text = own or question_of(heading, chinese)
            if text is None or not answers(chunk) or text in found:
                continue
            found.append(text)
            taken += 1
            if len(found) >= limit:
                return found
            if taken >= per_document:
                break
    return found


def question_of(heading: str, chinese: bool) -> str | None:
    """The question a section's heading path asks, in the question's language (``chinese``); None when the
    heading is in the other language, or names no subject."""
    parts = [p.strip() for p in heading.split(" > ") if p.strip()]
    if not parts:
        return None
    title, topic = parts[0], _topic(parts[-1])
    if not topic or topic.lower() in _NO_SUBJECT or is_chinese(topic) != chinese:
        return None
    if chinese:
        if _ASKING_ZH.search(topic):
            return topic.rstrip("？?") + "？"
        if len(parts) == 1:
            return f"文档中关于“{topic}”是怎么说的？"
        text = f"{title}中关于“{topic}”是怎么说的？"
        return text if len(text) <= MAX_CHARS else f"文档中关于“{topic}”是怎么说的？"
    if _ASKING_EN.match(topic):
        return topic.rstrip("?") + "?"
    topic = re.sub(r"^about\s+", "", topic, flags=re.IGNORECASE)  # "About the V2" -> "... about the V2?"
    if len(parts) == 1:
        return f"What do the documents say about {_lowered(topic)}?"
    text = f"What does {_the(title)} say about {_lowered(topic)}?"
    return text if len(text) <= MAX_CHARS else f"What do the documents say about {_lowered(topic)}?"


def answers(chunk: Chunk) -> bool:
    """Whether the section holds enough text to answer the question its heading makes."""
    cjk = len(_CJK.findall(chunk.text))
    return cjk >= MIN_CJK or len(_WORD.findall(_CJK.sub(" ", chunk.text))) >= MIN_WORDS


def _titles(chunks: Iterable[Chunk]) -> set[str]:
    """The document's title among ``chunks``' headings: the root of the sections' paths, or the one-level heading
    the document opens with. A question about it would find every section, none first."""
    chunks = list(chunks)
    roots = {c.heading.split(" > ")[0] for c in chunks if c.heading and " > " in c.heading}
    return roots | {c.heading for c in chunks if c.heading and c.ordinal == 0 and " > " not in c.heading}


def _nearest_first(cited: Chunk, around: Sequence[Chunk]) -> list[Chunk]:
    """``around`` by distance from ``cited`` (the next section before the one before at the same distance)."""
    return sorted(around, key=lambda c: (abs(c.ordinal - cited.ordinal), c.ordinal < cited.ordinal))


def _topic(part: str) -> str:
    topic = _CJK_NUMBERING.sub("", _NUMBERING.sub("", part.lstrip("#").strip()))
    while (shorter := _TRAILING.sub("", topic)) != topic:
        topic = shorter
    return topic.strip()


def _folded(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _already_asked(heading: str, asked: str) -> bool:
    """The question names the section's topic already: every word of it (Chinese: the topic itself)."""
    topic = _topic(heading.split(" > ")[-1]).lower()
    if is_chinese(topic):
        return "".join(_WORD.findall(topic)) in asked.replace(" ", "")
    words = set(_WORD.findall(topic)) - _STOP
    return bool(words) and words <= set(asked.split())


def _the(title: str) -> str:
    """'the Lumen Care Plus Service Agreement' (a title that starts with "The" keeps its own)."""
    return title if title.lower().startswith("the ") else f"the {title}"


def _lowered(topic: str) -> str:
    """'Cancellation and refunds' -> 'cancellation and refunds'; 'API keys', 'Lumen app' stay as written."""
    first, _, rest = topic.partition(" ")
    asking = first.lower() in ("what", "how", "why", "when", "where", "which", "who")  # "What Care Plus covers"
    if asking or (len(first) > 1 and first[0].isupper() and first[1:].islower() and not rest[:1].isupper()):
        return first.lower() + topic[len(first) :]
    return topic


def _written_first(questions: Sequence[str], taken: Sequence[str]) -> str | None:
    """The first of a chunk's written questions that is neither asked nor offered yet (by its folded words)."""
    folded = {_folded(q) for q in taken}
    return next((q for q in questions if _folded(q) not in folded), None)
