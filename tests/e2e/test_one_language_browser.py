"""One language at a time: a reader walks every tab in English, then in Chinese (a question asked, its trace
opened with every section, a test case saved and run, a document opened), and no text of the other language is on
the page. Names (documents, span and setting names, models) and the documents' own words aside: the documents
and the question are in the page's language."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from ragapp.ui.i18n import TEXTS
from ragapp.ui.page_language import HEADERS

pytestmark = [pytest.mark.e2e]

DOCS = {
    "en": {"alpha.md": "# Alpha robot\n\nThe Alpha robot battery lasts 90 minutes on a full charge.\n"},
    "zh": {"阿尔法.md": "# 阿尔法机器人\n\n阿尔法机器人的电池充满后可以使用九十分钟。\n"},
}
ASKED = {
    "en": ("How long does the Alpha battery last?", "The Alpha battery lasts 90 minutes [1]."),
    "zh": ("阿尔法机器人的电池能用多久？", "阿尔法机器人的电池可以使用九十分钟 [1]。"),
}
TABS = {"en": ["Chat", "Knowledge", "Intents", "Traces", "Admin"], "zh": ["对话", "知识库", "意图", "追踪", "管理"]}
LOCALES = {"en": "en-US", "zh": "zh-CN"}

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]")
WORD = re.compile(r"[A-Za-z][\w'-]*[A-Za-z]")
# Words a Chinese page may show: names of the app, formats, methods, models and metrics, the search channels and
# the trace's spans (names in the code, as a developer greps for them), and Gradio's own link to itself.
NAMES = {
    "ragapp", "English", "KB", "SYSTEM", "YAML", "JSON", "API", "Gradio", "OCR", "MRR", "nDCG", "Hit", "Top",
    "RRF", "zscore", "rrf", "md", "pdf", "default", "UTC", "ms", "id", "vector", "keyword", "scripted", "nanoe",
    "chat", "retrieve", "search", "channel", "fusion", "rerank", "generate", "llm", "answer", "memory", "rewrite",
    "route", "ingest", "parse", "chunk", "embed", "store", "index", "system", "user",
    "assistant", "bmp", "csv", "docx", "epub", "htm", "html", "jpeg", "jpg", "markdown", "png", "pptx", "tif",
    "tiff", "txt", "webp", "xlsx", "RAGAPP", "WORKFLOW", "ROUTE", "false", "true", "none", "off",
}  # fmt: skip
# Parts of the page that hold names and the documents' words only: the settings (names and values), the model
# calls (the exact prompt, in the app's prompt language), the exported file's name, code (commands, names), and
# the figures (drawn on the server without words: spans' names, "ms", "Hit", "MRR@10"), and the audit log's
# records as they were written (users, roles, targets, details; its column names are in HEADERS, checked by
# tests/unit/test_i18n.py).
# The progress bar's own line too (a step's count, the engine's ingest line: not the page's words). Gradio's
# status words are checked, as they were written during the walk (STATUS_LINES).
NAMES_ONLY = [
    "#settings-view",
    "#trace-llm",
    "#trace-export",
    "code",
    ".js-plotly-plot",
    "#audit-table",
    ".progress-text",
    ".eta-bar",
]

# Gradio's own status words ("In queue: 1 of 1" announced for an event waiting its turn, "Done" after it;
# "processing | 0.2s" on a component while its event runs): shown for a moment only, so recorded at every frame
# the browser draws, from the page's first script on, each distinct line once (digits aside).
STATUS_LINES = """
window.__statusLines = [];
(() => {
  const seen = new Set();
  const sample = () => {
    document.querySelectorAll("[role=status].sr-only, .meta-text, .meta-text-center").forEach((el) => {
      const text = (el.textContent || "").trim();
      const shape = text.replace(/[0-9.]+/g, "#");
      if (text && !seen.has(shape)) { seen.add(shape); window.__statusLines.push(text); }
    });
    requestAnimationFrame(sample);
  };
  requestAnimationFrame(sample);
})();
"""


def _visible_text(page: Any) -> str:
    """The page's visible text, without the parts that hold names only and the language switch."""
    return str(
        page.evaluate(
            """(skipped) => {
                const hidden = [];
                for (const selector of skipped) {
                    document.querySelectorAll(selector).forEach((el) => {
                        hidden.push([el, el.style.visibility]);
                        el.style.visibility = "hidden";
                    });
                }
                const text = document.body.innerText;
                hidden.forEach(([el, before]) => { el.style.visibility = before; });
                return text;
            }""",
            NAMES_ONLY,
        )
    ).replace("English · 中文", "")


# Not words: a setting's name and value (RAGAPP_WORKFLOW__ROUTE=false, fusion=zscore), a file name.
# The page's own English words that differ in Chinese (a column's name, a label): a line of one alone is English.
ENGLISH_UI = {en for en, zh in HEADERS.items() if en != zh} | {en for en, zh in TEXTS.values() if en != zh}
ID = re.compile(r"[_\d]")  # an identifier (min_rerank_score, a chunk's id), not a word
NOT_WORDS = re.compile(r"\b[A-Z][A-Z0-9_]{2,}(?:=\S*)?|\b\w+=\S+|\S+\.[a-z]{2,4}\b")


def other_language(text: str, lang: str) -> list[str]:
    """The lines of ``text`` with words of the language other than ``lang``: on an English page any Chinese, on
    a Chinese page an English word in lower case (a capitalised one alone is taken for a name: "Glide W3")."""
    if lang == "en":
        return [line for line in text.splitlines() if CJK.search(line)]
    english = []
    for line in text.splitlines():
        words = [w for w in WORD.findall(NOT_WORDS.sub(" ", line)) if w not in NAMES and not ID.search(w)]
        if any(w[0].islower() for w in words) or line.strip() in ENGLISH_UI:
            english.append(line)
    return english


def _check(page: Any, lang: str, where: str, seen: dict[str, list[str]]) -> None:
    page.wait_for_timeout(600)  # the page's script renames table headers a moment after a table is drawn
    # What was opened has finished loading: Gradio announces "In queue: 1 of 1" (排队中) while a tab's event
    # waits behind another on a busy machine.
    page.wait_for_function(
        "() => !['In queue:', '排队中'].some((line) => document.body.innerText.includes(line))", timeout=60_000
    )
    found = other_language(_visible_text(page), lang)
    if found:
        seen[where] = found


def _walk(page: Any, rig: Any, lang: str, artifacts: Path, fixtures: dict[str, Any]) -> dict[str, list[str]]:
    """Every tab with what a reader opens in it; returns, per place, the lines in the other language
    (``fixtures``: ``keep_for_docs`` and ``open_trace``)."""
    keep_for_docs, open_trace = fixtures["keep_for_docs"], fixtures["open_trace"]
    seen: dict[str, list[str]] = {}
    tabs = TABS[lang]
    question, reply = ASKED[lang]
    rig.llm.enqueue(reply)
    box = page.locator("#question textarea")
    box.fill(question)
    box.press("Enter")
    page.wait_for_function(
        "() => document.querySelectorAll('#chatbot .message').length > 2"
        " && !document.querySelector('#chatbot .pending, #chatbot [data-status=\"pending\"]')"
        " && !document.querySelector('.generating')",
        timeout=60_000,
    )
    page.wait_for_timeout(600)
    page.screenshot(path=str(artifacts / f"chat-{lang}.png"))
    keep_for_docs(artifacts / f"chat-{lang}.png")
    page.locator("#about .label-wrap").click()  # the model and index line
    _check(page, lang, "chat", seen)

    page.get_by_role("tab", name=tabs[1], exact=True).click()
    name = next(iter(DOCS[lang]))
    page.locator("#documents").get_by_text(name).filter(visible=True).first.click()
    expect(page.locator("#doc-view")).to_be_visible()
    page.locator("#doc-chunks").get_by_text(DOCS[lang][name].split("\n")[2][:6]).first.wait_for(state="attached")
    _check(page, lang, "knowledge", seen)
    page.screenshot(path=str(artifacts / f"knowledge-{lang}.png"))
    keep_for_docs(artifacts / f"knowledge-{lang}.png")

    page.get_by_role("tab", name=tabs[2], exact=True).click()
    page.locator("#intent-tree").wait_for()
    _check(page, lang, "intents", seen)

    page.get_by_role("tab", name=tabs[3], exact=True).click()
    open_trace(page, question[:8])
    expect(page.locator("#trace-detail")).to_be_visible()
    for accordion in page.locator("#trace-detail .label-wrap").all():  # every section opened
        accordion.click()
    page.locator("#why-doc input").click()
    page.get_by_role("option", name=name).click()
    page.locator("#why-button").click()
    page.locator("#why-text h3").wait_for()
    page.locator("#case-save").click()  # the cited document is picked already
    page.locator("#case-saved").get_by_text("#1").filter(visible=True).wait_for()
    page.locator("#eval-run").click()
    page.locator("#eval-results").get_by_text(name).first.wait_for(state="attached")
    page.locator("#eval-metrics table").wait_for()
    _check(page, lang, "traces", seen)

    page.get_by_role("tab", name=tabs[4], exact=True).click()
    page.locator("#settings-view").wait_for()
    _check(page, lang, "admin", seen)
    return seen


# Both walks are behind `slow` (make test-slow, which CI runs after make test; 15-23 s each on 2 cores, the
# longest tests of the default run, which must stay under 10 minutes): in the default run, tests/unit/test_i18n.py
# rules out an English text that is not English (and a Chinese one missing), and the Chinese first screen
# (test_first_screen_browser.py) and sign-in page are walked in the browser.
@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_tab_speaks_the_pages_language_only(
    lang: str,
    scripted_app: Callable[..., Any],
    browser: Any,
    artifacts: Path,
    keep_for_docs: Callable[[Path], None],
    open_trace: Callable[[Any, str], None],
) -> None:
    rig, url = scripted_app(DOCS[lang])
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale=LOCALES[lang])
    try:
        context.add_init_script(STATUS_LINES)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(url)
        page.locator("#question textarea").wait_for()
        expect(page.get_by_role("tab")).to_have_text(TABS[lang], timeout=10_000)
        seen = _walk(page, rig, lang, artifacts, {"keep_for_docs": keep_for_docs, "open_trace": open_trace})
        status = page.evaluate("() => window.__statusLines")
        assert status, "no status line of Gradio's was seen: the recorder is broken"
        if other := other_language("\n".join(status), lang):
            seen["Gradio's status lines"] = other
        assert not seen, f"text of the other language on a page in {lang}:\n" + "\n".join(
            f"{where}: {line!r}" for where, lines in seen.items() for line in lines
        )
        # The switch, on the page as it is: the tables drawn already rename their columns too.
        other = "zh" if lang == "en" else "en"
        page.locator("#language-switch").get_by_role("link", name={"en": "English", "zh": "中文"}[other]).click()
        expect(page.get_by_role("tab")).to_have_text(TABS[other], timeout=10_000)
        page.get_by_role("tab", name=TABS[other][1], exact=True).click()
        name_column = {"en": "Name", "zh": "名称"}[other]
        expect(page.locator("#documents thead .header").first).to_have_text(name_column)
    finally:
        context.close()


def test_the_check_finds_the_other_language() -> None:
    """The check itself: Chinese on an English page, English words on a Chinese one, and names allowed."""
    assert other_language("Send\n发送\nalpha.md", "en") == ["发送"]
    shown = "发送\nSend feedback\n导出 JSON\n最低（min_rerank_score）\nGlide W3 的安全绳\n（RAGAPP_AUTH__ENABLED=true）"
    shown += "\nfallback"
    assert other_language(shown, "zh") == ["Send feedback", "fallback"]
