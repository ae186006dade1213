"""The page's texts: every key the UI uses has its English and its Chinese, and each says one language."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ragapp.ui import i18n, page_language
from ragapp.ui.i18n import I18N, PREFIX, TEXTS, t, t_str

UI = Path(i18n.__file__).parent
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _keys_used() -> dict[str, list[str]]:
    """Key -> the ui modules that pass it to ``t``/``t_str`` (as a literal: a computed key would escape this)."""
    used: dict[str, list[str]] = {}
    for path in sorted(p for p in UI.glob("*.py") if p.name != "i18n.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("t", "t_str"):
                (arg,) = node.args
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                assert literal, f"{path.name}: t() of a non-literal"
                used.setdefault(arg.value, []).append(path.name)
    return used


def test_every_key_used_has_both_languages() -> None:
    used = _keys_used()
    assert len(used) > 100  # the scan found the layout's calls
    missing = {key: files for key, files in used.items() if key not in TEXTS}
    assert not missing, f"add these to TEXTS in ragapp/ui/i18n.py: {missing}"
    assert sorted(set(TEXTS) - set(used)) == [], "keys no module uses"


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_each_text_is_one_language(key: str) -> None:
    en, zh = TEXTS[key]
    assert en.strip() and zh.strip()
    assert not CJK.search(en), f"{key}: Chinese in the English text"
    assert CJK.search(zh), f"{key}: no Chinese in the Chinese text"
    assert " · " not in en + zh, f"{key}: a doubled 'English · 中文' text"


def test_the_i18n_object_holds_every_key_in_both_languages() -> None:
    translations = I18N.translations_dict
    assert set(translations) == {"en", "zh"}  # zh-CN and zh-TW browsers fall back to zh in Gradio's frontend
    ours = {PREFIX + key for key in TEXTS} | set(i18n.GRADIO_TEXTS)  # and Gradio's words it leaves untranslated
    assert set(translations["en"]) == set(translations["zh"]) == ours
    assert translations["en"][PREFIX + "kb.tab"] == "Knowledge" and translations["zh"][PREFIX + "kb.tab"] == "知识库"
    assert translations["zh"]["common.complete"] == "完成"
    # Gradio's queue line, which its zh-CN table lacks, with the places Gradio fills in
    queue = translations["zh"]["status.queue_position"]
    assert CJK.search(queue) and "{position}" in queue and "{size}" in queue


def test_each_column_name_has_one_chinese_name_of_its_own() -> None:
    """The page renames a table's English column names in a Chinese page, and back: a Chinese name shared by two
    English ones would come back as the wrong one."""
    chinese = list(page_language.HEADERS.values())
    assert len(set(chinese)) == len(chinese)
    for en, zh in page_language.HEADERS.items():
        assert en.strip() and zh.strip() and not CJK.search(en) and " · " not in en + zh
    assert '"Knowledge base": "知识库"' in page_language.HEAD  # the script holds them


def test_gradio_status_words_have_chinese_with_the_same_numbers() -> None:
    """The words Gradio's status tracker writes untranslated, renamed by the page's script both ways."""
    for en, zh in page_language.STATUS_WORDS:
        assert not CJK.search(en) and CJK.search(zh) and en.count("{n}") == zh.count("{n}") <= 1
    assert '["processing |", "处理中 |"]' in page_language.HEAD  # the script holds them


def test_every_table_names_its_columns_from_the_list() -> None:
    """Each table's English column names are ones the page can rename (a new column needs its Chinese)."""
    from ragapp.ui import (
        admin,
        admin_audit,
        admin_sessions,
        documents,
        handlers,
        intents_layout,
        testcases,
        trace_views,
        traces,
    )

    tables = [
        admin.USER_HEADERS, admin.KB_HEADERS, admin_audit.HEADERS, admin_sessions.SIGN_IN_HEADERS,
        documents.CHUNK_HEADERS, handlers.DOC_HEADERS,
        intents_layout.TREE_HEADERS, intents_layout.SCORE_HEADERS, testcases.CASE_HEADERS,
        testcases.RESULT_HEADERS, trace_views.SUMMARY_HEADERS, trace_views.FUSED_HEADERS_START,
        trace_views.FUSED_HEADERS_END, traces.CHANNEL_HEADERS, traces.INTENT_HEADERS, traces.AGENT_HEADERS,
    ]  # fmt: skip
    missing = sorted({name for table in tables for name in table} - set(page_language.HEADERS))
    assert missing == [], f"add these column names to HEADERS in ragapp/ui/i18n.py: {missing}"


def test_t_marks_the_key_for_the_frontend() -> None:
    assert t("chat.send").key == "ragapp.chat.send"
    assert t_str("chat.placeholder").startswith("__i18n__") and '"ragapp.chat.placeholder"' in t_str("chat.placeholder")
    with pytest.raises(KeyError, match="add it, in English and Chinese"):
        t("chat.no_such_text")


def test_the_switch_links_name_each_language_in_itself() -> None:
    assert page_language.SWITCH == "[English](?lang=en) · [中文](?lang=zh)"
    assert (
        page_language.STORAGE_KEY in page_language.HEAD
        and "changeLocale" in page_language.HEAD
        and "__KEY__" not in page_language.HEAD
    )
