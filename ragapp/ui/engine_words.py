"""The engine's own explanations in the page's language: a relevance gate's reason, a routing reason, a
confidence check's detail. The engine explains in English, as its logs, traces and HTTP API do; this table gives
the page the same explanation in Chinese, phrase by phrase, and ``explained`` shows the one the page speaks.

Written here, not in a library: gettext would need the engine to mark and format its messages through it, and
the engine keeps no words of the page. A phrasing not listed shows in English in both languages: when the engine
says something new, add it here (``tests/unit/test_engine_words.py`` holds one example of each).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from ragapp.ui.i18n import both

Chinese = Callable[[re.Match[str]], str]


_PHRASES: list[tuple[str, str | Chinese]] = [
    # Notices of a turn (ragapp.agent.runner, ragapp.qa.writer) and a search's degradations
    # (ragapp.retrieval.pipeline; "A; B" is said part by part)
    (
        r"The agent could not work on this question \((?P<error>.*)\); answering with the workflow instead\.",
        "智能体无法处理这个问题（{error}），改用工作流回答。",
    ),
    (
        r"The model failed mid-way \((?P<error>.*)\); answering from what was found\.",
        "模型中途出错（{error}），根据已找到的资料回答。",
    ),
    (
        r"The agent kept repeating a call; answering from what was found\.",
        "智能体一直重复同一个调用，根据已找到的资料回答。",
    ),
    (
        r"Reached the limit of (?P<n>\d+) agent steps; answering from what was found\.",
        "已达到 {n} 步的上限，根据已找到的资料回答。",
    ),
    (r"The language model failed \((?P<error>.*)\)", "语言模型出错（{error}）"),
    (r"The language model returned an empty answer", "语言模型返回了空回答"),
    (r"(?P<channel>\S+) search timed out after (?P<s>\S+) s", "{channel} 检索超时（{s} 秒）"),
    (r"(?P<channel>\S+) search failed \((?P<error>\w+)\)", "{channel} 检索失败（{error}）"),
    (r"this answer uses (?P<channels>.+) search only", "本次回答只用了 {channels} 检索"),
    (r"no search channel answered", "没有检索通道返回结果"),
    (r"reranker failed \((?P<error>\w+)\)", "重排序失败（{error}）"),
    (r"using the fused order", "改用融合后的排序"),
    # What the token budget compressed (ragapp.qa.prompt_fit, ragapp.agent.tool_budget)
    (r"(?P<n>\d+) earlier messages left out of the prompt", "{n} 条较早的消息未放入提示词"),
    (r"summary shortened from (?P<a>\d+) to (?P<b>\d+) tokens", "摘要从 {a} 个词元缩短到 {b} 个"),
    (r"passages after the best condensed to (?P<n>\d+) sentence\(s\) each", "除最相关的段落外，每段压缩为 {n} 句"),
    (r"(?P<n>\d+) passages dropped", "舍弃了 {n} 个段落"),
    (r"tool descriptions shortened to their first sentence", "工具描述缩短为第一句"),
    (r"tool descriptions left out \(names and arguments only\)", "省略了工具描述（只保留名称和参数）"),
]
# "report.pdf: the file is empty.": a file's name, then what happened to it.
_NAMED = re.compile(r"(?P<name>[^:\n]{1,200}\.\w{1,5}): (?P<said>.+)", re.DOTALL)
_COMPILED = [(re.compile(pattern), chinese) for pattern, chinese in _PHRASES]
_PART = re.compile(r"part (?P<n>\d+)(?:: (?P<rest>.*))?")


def in_chinese(english: str) -> str | None:
    """The engine's explanation ``english`` in Chinese; None when the table does not know the phrasing."""
    part = _PART.fullmatch(english)
    if part is not None:  # "part 2: 1 of 2 sentences in the passages"
        rest = in_chinese(part["rest"]) if part["rest"] else ""
        return None if rest is None else f"第 {part['n']} 部分" + (f"：{rest}" if rest else "")
    for pattern, chinese in _COMPILED:
        match = pattern.fullmatch(english)
        if match is not None:
            if callable(chinese):
                return chinese(match)
            return chinese.format(**{k: v or "" for k, v in match.groupdict().items()})
    named = _NAMED.fullmatch(english)
    if named is not None and (said := in_chinese(named["said"])) is not None:
        return f"{named['name']}：{said}"
    if "; " in english:  # "vector search timed out after 5 s; this answer uses keyword search only"
        parts = [in_chinese(part) for part in english.split("; ")]
        return "；".join(p for p in parts if p is not None) if all(p is not None for p in parts) else None
    return None


def explained(english: str, escape: Callable[[str], str] = lambda text: html.escape(text, quote=False)) -> str:
    """The explanation as the page shows it, escaped (it may quote names, and a notice a document's words:
    pass ``markup.escape_text`` where Markdown renders it): in both languages when the table knows it."""
    chinese = in_chinese(english)
    return escape(english) if chinese is None else both(escape(english), escape(chinese))
