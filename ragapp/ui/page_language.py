"""The page's language in the browser: the header's English · 中文 switch and the script and style mounted
with the page (``HEAD``). The script switches Gradio's frontend to the language chosen (kept in the browser),
renames what Gradio leaves untranslated (tabs not open, tables' column names, the chat's choice buttons), and the
style hides the words of the other language (``i18n.both``). The words themselves are in ``ragapp.ui.i18n``."""

from __future__ import annotations

import json
from typing import Literal

from ragapp.ui.i18n import TEXTS

# Tables' column names, English -> Chinese. Gradio translates no table header, so the tables are built with the
# English names and the page's script (``HEAD``) renames their header cells in a Chinese page, and back. A name
# "A · B" whose A is here is renamed as A (B is a channel's or a method's name).
HEADERS: dict[str, str] = {
    # Knowledge
    "Name": "名称",
    "Knowledge base": "知识库",
    "Type": "文件类型",
    "Pages": "页数",
    "Chunks": "片段数",
    "Left out": "未编入",
    "Added (UTC)": "添加时间 (UTC)",
    "#": "#",
    "Page": "页",
    "Heading": "标题",
    "Read as": "读取方式",
    "Text": "文本",
    "Location": "位置",
    "State": "同步状态",
    "Last sync (UTC)": "上次同步 (UTC)",
    "Last report": "上次报告",
    # Intents
    "Intent": "意图",
    "Code": "代码",
    "Kind": "类型",
    "Knowledge bases": "检索的知识库",
    "Examples": "示例",
    "Top-k": "Top-k",
    "Path": "路径",
    "Score": "得分",
    # Traces
    "Time (UTC)": "时间 (UTC)",
    "Question": "问题",
    "Mode": "模式",
    "Total (s)": "总耗时 (秒)",
    "Status": "状态",
    "Feedback": "反馈",
    "Degradations": "降级",
    "Final": "最终排名",
    "Moved": "变动",
    "Fused": "融合排名",
    "Source": "来源",
    "Chunk": "片段",
    "Rank": "排名",
    "Fused score": "融合得分",
    "Rerank score": "重排得分",
    "In prompt": "进入提示",
    "Channel": "通道",
    "Document": "文档",
    "Chunk id": "片段编号",
    "Step": "步骤",
    "Tool": "工具",
    "Arguments": "参数",
    "Seconds": "秒",
    "Result": "结果",
    "Routed": "路由",
    "Action": "动作",
    "Reason": "原因",
    # Test cases
    "Expected documents": "应命中的文档",
    "Saved (UTC)": "保存时间 (UTC)",
    "Run": "运行",
    "Expected": "应命中",
    "First found at": "首次命中位置",
    "Hit": "命中",
    "MRR": "MRR",
    "nDCG": "nDCG",
    "Top documents": "排名靠前的文档",
    "ms": "毫秒",
    "Verdict": "判定",
    "Last run": "上次运行",
    "Answer": "回答",
    # Admin
    "Role": "角色",
    "Groups": "分组",
    "Signs in with": "账号来源",
    "Readers": "可读",
    "Editors": "可编辑",
    # Admin: sign-ins
    "User": "用户",
    "Signed in (UTC)": "登录时间 (UTC)",
    "Expires (UTC)": "过期时间 (UTC)",
    "Last seen (UTC)": "最近活动 (UTC)",
    "From": "来源地址",
    "Browser": "浏览器",
    "How": "登录方式",
    "ID": "ID",
    # Admin: the audit log
    "Client": "客户端地址",
    "Target": "对象",
    "Outcome": "处理结果",
    "Detail": "详情",
}

# The chat's buttons made at run time whose labels are the page's words (the others are intents' names): the page
# renames them as it does the columns (Gradio translates neither).
CHOICES: dict[str, str] = {"Search everything": "全部检索", "Answer again": "重新回答", "Remember this": "记住"}


def shown(visible: bool) -> bool | Literal["hidden"]:
    """What ``visible=`` takes to show or hide a component that may be shown again. Gradio draws a component
    shown after ``visible=False`` with the words of the language the page had when it first drew it ("Close"
    stayed English after a switch to 中文); one hidden as "hidden" stays drawn, only not displayed, so a
    switch reaches it."""
    return True if visible else "hidden"


# The words Gradio 6.31's status tracker writes on a component while its event waits or runs, with no key of its
# translations (``status.queue_position``, the line it announces, has one: ``i18n.GRADIO_TEXTS``); "{n}" stands
# for the numbers ("queue: 2/3 |").
STATUS_WORDS = [("queue: {n} |", "排队 {n} |"), ("processing |", "处理中 |"), ("from cache", "来自缓存"),
                ("used cache", "用了缓存")]  # fmt: skip

# Where the browser keeps the page's language ("en" or "zh"; none: the browser's language).
STORAGE_KEY = "ragapp-lang"

# Gradio's frontend has no setting for the language: it reads navigator.language once, before this script runs.
# Its own Settings panel switches with changeLocale(), exported by its core module (loaded by then), which this
# script imports. Everything on the page follows a change but the names of the tabs not open (Gradio 6.31: a
# TabItem not shown keeps the label it was registered with), so the script renames those itself. On a page
# being built it switches at once to a locale of ours alone ("zh", "en": no file of Gradio's to load, so set
# before most of the page is built), then to the full one ("zh-CN", "en-US", with Gradio's own words). Gradio
# knows zh-CN and zh-TW only: other Chinese browsers (zh, zh-HK, zh-SG) would get English, so they are switched
# too. Any failure leaves the page in the browser's language.
_TAB_KEYS = ("chat.tab", "kb.tab", "intents.tab", "traces.tab", "admin.tab")
_SCRIPT = (
    """<script>
(() => {
  const KEY = "__KEY__";
  const TABS = __TABS__;
  const FULL = { en: "en-US", zh: "zh-CN" };
  const known = (lang) => lang === "en" || lang === "zh";
  const stored = () => { try { return localStorage.getItem(KEY); } catch { return null; } };
  const keep = (lang) => {
    try { if (known(lang)) localStorage.setItem(KEY, lang); else localStorage.removeItem(KEY); } catch {}
  };
  const core = performance.getEntriesByType("resource").map((entry) => entry.name)
    .find((name) => /\\/assets\\/core-[^/?]*\\.js$/.test(name));
  // Every switch, the reader's or the page's own, starts a new generation; a timer or a pending import of an
  // older one does nothing. A click on the switch right after a load must win over the load's own switch.
  let generation = 0;
  const current = (mine) => mine === generation;
  const apply = (locale, mine = generation) => {
    if (core) import(core).then((module) => {
      if (current(mine) && module.changeLocale) module.changeLocale(locale);
    }).catch(() => {});
  };
  const rename = (lang) => {
    const other = lang === "zh" ? "en" : "zh";
    document.querySelectorAll("[role=tablist] button, .overflow-menu button").forEach((button) => {
      const text = button.firstChild;
      const index = text && text.nodeType === Node.TEXT_NODE ? TABS[other].indexOf(text.nodeValue.trim()) : -1;
      if (index >= 0) text.nodeValue = TABS[lang][index];  // the same node: Gradio's later updates still land
    });
  };
  // Once the page is built and speaks ``locale``: the tabs renamed, and again a little later (late tabs).
  const settled = (locale, mine, tries = 300) => {
    if (!current(mine)) return;
    const ready = document.getElementById("language-switch") && document.documentElement.lang === locale;
    if (ready) [0, 500, 2000].forEach((ms) => setTimeout(() => current(mine) && rename(locale.slice(0, 2)), ms));
    else if (tries > 0) setTimeout(() => settled(locale, mine, tries - 1), 100);
  };
  const switchTo = (locale) => { generation += 1; apply(locale, generation); settled(locale, generation); };
  const asked = new URLSearchParams(window.location.search).get("lang");
  if (asked) keep(asked);
  const lang = stored();
  const browser = navigator.language || "";
  let full = null;
  if (known(lang)) full = FULL[lang];
  else if (/^zh/i.test(browser) && !/^zh-(CN|TW)$/i.test(browser)) {
    full = /^zh-(HK|MO|Hant)/i.test(browser) ? "zh-TW" : "zh-CN";
  }
  if (full && full.slice(0, 2) !== (document.documentElement.lang || "").slice(0, 2)) apply(full.slice(0, 2));
  if (full) {
    const first = generation;  // a click before the page is built makes this switch moot
    const wait = (tries = 300) => {
      if (!current(first)) return;
      if (document.getElementById("language-switch")) setTimeout(() => current(first) && switchTo(full), 300);
      else if (tries > 0) setTimeout(() => wait(tries - 1), 100);
    };
    wait();
  }
  // Tables' header cells and the chat's choice buttons in the page's language (English -> Chinese), whenever one
  // is drawn or redrawn and whenever the language changes; a column "A · B" is renamed by its A.
  const HEADERS = __HEADERS__;
  const BACK = Object.fromEntries(Object.entries(HEADERS).map(([en, zh]) => [zh, en]));
  const headerName = (text, lang) => {
    const names = lang === "zh" ? HEADERS : BACK;
    if (Object.hasOwn(names, text)) return names[text];
    const cut = text.indexOf(" · ");
    return cut > 0 && Object.hasOwn(names, text.slice(0, cut)) ? names[text.slice(0, cut)] + text.slice(cut) : null;
  };
  const renameHeaders = () => {
    const lang = /^zh/i.test(document.documentElement.lang || "") ? "zh" : "en";
    const cells = document.querySelectorAll("thead .header, #chatbot button.option");
    cells.forEach((cell) => cell.childNodes.forEach((node) => {
      if (node.nodeType !== Node.TEXT_NODE) return;
      const text = node.nodeValue.trim();
      const name = text ? headerName(text, lang) : null;
      if (name !== null && name !== text) node.nodeValue = name;  // the same node: Gradio's updates still land
    }));
  };
  // Gradio's status tracker writes words of its own in English whatever the locale, one text node each
  // ("queue: 2/3 |", "processing |"): said in the page's language as soon as they are written (before the page
  // is drawn again, so the English never shows), and back on a switch to English. "{n}" stands for the numbers.
  const STATUS = __STATUS__;
  // The words around "{n}", and what a text node holds between them (null: not these words).
  const numbers = (text, words) => {
    const [head, tail = ""] = words.split("{n}");
    const ok = text.startsWith(head) && text.endsWith(tail) && text.length >= head.length + tail.length;
    return ok && (words.includes("{n}") || text === words) ? text.slice(head.length, text.length - tail.length) : null;
  };
  const statusWords = () => {
    const [from, to] = /^zh/i.test(document.documentElement.lang || "") ? [0, 1] : [1, 0];
    document.querySelectorAll(".meta-text, .meta-text-center").forEach((box) => {
      const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.nodeValue.trim();
        for (const said of STATUS) {
          const found = numbers(text, said[from]);
          if (found === null) continue;
          // The same node, its spaces kept: Gradio's later updates still land.
          node.nodeValue = node.nodeValue.replace(text, said[to].replace("{n}", found));
          break;
        }
      }
    });
  };
  let renaming = false;
  new MutationObserver(() => {
    statusWords();
    if (renaming) return;
    renaming = true;
    setTimeout(() => { renaming = false; renameHeaders(); }, 50);
  }).observe(document.documentElement, {
    subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["lang"],
  });
  // Capture: the links are a Markdown's, which would open them in a new tab.
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("#language-switch a[href^='?lang=']") : null;
    if (!link) return;
    event.preventDefault();
    event.stopPropagation();
    const chosen = new URLSearchParams(link.getAttribute("href")).get("lang");
    keep(chosen);
    switchTo(FULL[chosen] || "en-US");
  }, true);
})();
</script>""".replace("__KEY__", STORAGE_KEY)
    .replace("__HEADERS__", json.dumps(HEADERS | CHOICES, ensure_ascii=False))
    .replace("__STATUS__", json.dumps(STATUS_WORDS, ensure_ascii=False))
    .replace(
        "__TABS__",
        json.dumps(
            {lang: [TEXTS[key][i] for key in _TAB_KEYS] for i, lang in enumerate(("en", "zh"))}, ensure_ascii=False
        ),
    )
)

# The page's language is on <html lang>: the examples of the other language are hidden, the current one is bold.
_STYLE = """<style>
html[lang^="zh"] #examples-en, html:not([lang^="zh"]) #examples-zh { display: none !important; }
html[lang^="zh"] #kb-questions-en, html:not([lang^="zh"]) #kb-questions-zh { display: none !important; }
html[lang^="zh"] .lang-en, html:not([lang^="zh"]) .lang-zh { display: none !important; }
#language-switch { text-align: right; }
/* Gradio 6.31 titles its toasts "Info", "Warning" and "Error" in English whatever the title asked for: the page
   hides that word and says it in its own language. */
.toast-title { visibility: hidden; font-size: 0 !important; }
.toast-title::after { visibility: visible; font-size: var(--text-md); }
.toast-title.info::after { content: "Info"; }
.toast-title.warning::after { content: "Warning"; }
.toast-title.error::after { content: "Error"; }
.toast-title.success::after { content: "Done"; }
html[lang^="zh"] .toast-title.info::after { content: "提示"; }
html[lang^="zh"] .toast-title.warning::after { content: "注意"; }
html[lang^="zh"] .toast-title.error::after { content: "出错了"; }
html[lang^="zh"] .toast-title.success::after { content: "完成"; }
#language-switch a { text-decoration: none; }
html[lang^="zh"] #language-switch a[href="?lang=zh"],
html:not([lang^="zh"]) #language-switch a[href="?lang=en"] { font-weight: bold; }
</style>"""

HEAD = _SCRIPT + _STYLE
"""The page's ``head``: the language switch and the style that goes with it (mount it with ``I18N``)."""

# The header's switch (a Markdown: gr.HTML runs scripts the page's Content-Security-Policy refuses). Each language
# is named in itself, so that either reader finds theirs. The script reads a link's ?lang= on a page opened by it.
SWITCH = "[English](?lang=en) · [中文](?lang=zh)"
