"""The engine's explanations said in Chinese on a Chinese page (``ragapp.ui.engine_words``): one example of each
phrasing the engine uses, and what happens to one the table does not know."""

from __future__ import annotations

from html import unescape

import pytest

from ragapp.ui.engine_words import explained, in_chinese
from tests.text import shown

EXAMPLES = [
    ("4 earlier messages left out of the prompt", "4 条较早的消息未放入提示词"),
    ("summary shortened from 300 to 90 tokens", "摘要从 300 个词元缩短到 90 个"),
    ("passages after the best condensed to 1 sentence(s) each", "除最相关的段落外，每段压缩为 1 句"),
    ("2 passages dropped", "舍弃了 2 个段落"),
    ("tool descriptions shortened to their first sentence", "工具描述缩短为第一句"),
    ("tool descriptions left out (names and arguments only)", "省略了工具描述（只保留名称和参数）"),
    (
        "The agent could not work on this question (timed out); answering with the workflow instead.",
        "智能体无法处理这个问题（timed out），改用工作流回答。",
    ),
    ("The model failed mid-way (boom); answering from what was found.", "模型中途出错（boom），根据已找到的资料回答。"),
    (
        "The agent kept repeating a call; answering from what was found.",
        "智能体一直重复同一个调用，根据已找到的资料回答。",
    ),
    ("Reached the limit of 6 agent steps; answering from what was found.", "已达到 6 步的上限，根据已找到的资料回答。"),
    ("The language model failed (LLMError: down)", "语言模型出错（LLMError: down）"),
    ("The language model returned an empty answer", "语言模型返回了空回答"),
    (
        "vector search timed out after 5 s; this answer uses keyword search only",
        "vector 检索超时（5 秒）；本次回答只用了 keyword 检索",
    ),
    (
        "keyword search failed (OSError); no search channel answered",
        "keyword 检索失败（OSError）；没有检索通道返回结果",
    ),
    ("reranker failed (RuntimeError); using the fused order", "重排序失败（RuntimeError）；改用融合后的排序"),
]


@pytest.mark.parametrize(("english", "chinese"), EXAMPLES)
def test_each_phrasing_the_engine_uses_has_its_chinese(english: str, chinese: str) -> None:
    assert in_chinese(english) == chinese
    said = explained(english)  # HTML: escaped
    assert unescape(shown(said, "en")) == english and unescape(shown(said, "zh")) == chinese


def test_a_phrasing_not_listed_shows_as_the_engine_said_it_escaped() -> None:
    assert in_chinese("something new <b>") is None
    assert explained("something new <b>") == "something new &lt;b&gt;"
    assert in_chinese("part 3: something new") is None
