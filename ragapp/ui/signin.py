"""The sign-in page, ours in place of Gradio's stock form: the app's name and purpose, a name and a password, the
header's English · 中文 switch, and every word in the page's language alone.

The page is plain HTML (no Gradio) that ``ragapp.serve.signin_page`` serves at /signin. Its script (``SCRIPT``,
served as a file, so the page needs no inline script) picks the language as the app does (``ragapp.ui.i18n``:
``?lang=`` first and kept under the same ``STORAGE_KEY``, then the kept choice, then the browser's language),
and posts the form to Gradio's own POST /login, which checks it with the engine and sets the sign-in cookies.
Each text is on the page in both languages, and a style hides the one that is not ``<html lang>``'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from ragapp.ui.page_language import STORAGE_KEY

# key: (English, Chinese). The English words are the ones the browser tests look for.
TEXTS: dict[str, tuple[str, str]] = {
    "title": ("Sign in · ragapp", "登录 · ragapp"),
    "purpose": ("Ask questions about your documents", "就你的文档提问"),
    "hint": ("Sign in with the account your administrator gave you", "请用管理员分配的账号登录"),
    "hint_directory": ("Sign in with your company account", "请用公司账号登录"),  # an LDAP directory checks it
    "name": ("Name", "用户名"),
    "password": ("Password", "密码"),
    "submit": ("Sign in", "登录"),
    "or": ("or", "或"),
    "noscript": ("Signing in needs JavaScript: turn it on for this site.", "登录需要 JavaScript：请为本站启用。"),
    # What the form says when a sign-in does not happen (``SCRIPT`` shows one by its key)
    "empty_name": ("Enter your name.", "请输入用户名。"),
    "empty_password": ("Enter your password.", "请输入密码。"),
    "wrong": ("Wrong name or password.", "用户名或密码错误。"),
    "throttled": (
        "Too many failed sign-ins: wait a few minutes, then try again.",
        "登录失败次数过多：请等几分钟再试。",
    ),
    "failed": ("The server did not answer: try again in a moment.", "服务器没有响应：请稍后再试。"),
    "unavailable": (
        "The company directory did not answer: try again in a moment.",
        "公司目录服务没有响应：请稍后再试。",
    ),
    "no_role": (
        "Your account is in no group this app gives a role to: ask an administrator.",
        "你的账号不在本应用授予角色的任何组中：请联系管理员。",
    ),
}
SCRIPT_PATH = "/signin.js"  # where the server serves ``SCRIPT``
# Why Gradio's POST /login refused, which its reply does not say: the server adds it. "wrong", "throttled",
# "unavailable" (the LDAP directory did not answer) or "no_role" (the directory's yes, but no group gives a role).
REFUSED_HEADER = "X-Sign-In-Refused"
MESSAGES = ("empty_name", "empty_password", "wrong", "throttled", "failed", "unavailable", "no_role")
LANGUAGES = ("en", "zh")


@dataclass(frozen=True)
class SignInLink:
    """Another way in, listed under the form: "Sign in with your company account" (OIDC, LDAP).

    Args:
        path: where it starts, on this app (``/auth/oidc``); the root path is put before it.
        label: the link's words, (English, Chinese).
    """

    path: str
    label: tuple[str, str]


def page_language(asked: str | None, accept_language: str = "") -> str:
    """The language the server writes the page in, "en" or "zh": ``?lang=`` when it names one, else the
    browser's first language (the page's script then follows a choice the browser kept)."""
    if asked in LANGUAGES:
        return asked
    first = accept_language.split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def sign_in_page(
    root_path: str = "",
    lang: str = "en",
    links: Sequence[SignInLink] = (),
    notice: tuple[str, str] | None = None,
    directory: bool = False,
) -> str:
    """The page's HTML, in ``lang`` until its script says otherwise.

    Args:
        root_path: the public sub-path the app is served under ("" at the root): every address starts with it.
        lang: "en" or "zh".
        links: other ways to sign in, under the form (none: no such section).
        notice: why the last sign-in elsewhere did not happen (English, Chinese), shown above the button.
        directory: whether the form takes company (LDAP) accounts too: the hint says so.
    """
    root = quote(root_path.rstrip("/"), safe="/%")  # safe as it is in HTML, CSS and script alike
    lang = lang if lang in LANGUAGES else "en"
    title = TEXTS["title"]
    messages = "".join(f'<p class="message" data-message="{key}" hidden>{_both(key)}</p>' for key in MESSAGES)
    if notice is not None:  # hidden by the script like the others once the form says something itself
        messages += f'<p class="message" data-message="notice" id="signin-notice">{_pair(notice)}</p>'
    others = ""
    if links:
        items = "".join(f'<a class="other" href="{root}{escape(link.path)}">{_pair(link.label)}</a>' for link in links)
        others = f'<section id="other-sign-ins"><p class="or">{_both("or")}</p>{items}</section>'
    return f"""<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title data-en="{escape(title[0])}" data-zh="{escape(title[1])}">{escape(title[LANGUAGES.index(lang)])}</title>
<script src="{root}{SCRIPT_PATH}"></script>
<style>{_STYLE.replace("__ROOT__", root)}</style>
</head>
<body>
<nav id="language-switch"><a href="?lang=en" lang="en">English</a> · <a href="?lang=zh" lang="zh">中文</a></nav>
<main>
<header><h1>ragapp</h1><p id="purpose">{_both("purpose")}</p></header>
<form id="signin" method="post" action="{root}/login" data-home="{root}/" novalidate>
<p id="hint">{_both("hint_directory" if directory else "hint")}</p>
<label for="signin-name">{_both("name")}</label>
<input id="signin-name" name="username" type="text" autocomplete="username" autocapitalize="none"
 spellcheck="false" autofocus>
<label for="signin-password">{_both("password")}</label>
<input id="signin-password" name="password" type="password" autocomplete="current-password">
<div id="signin-error" role="alert">{messages}</div>
<button id="signin-submit" type="submit">{_both("submit")}</button>
</form>
{others}
<noscript><p class="message">{_both("noscript")}</p></noscript>
</main>
</body>
</html>
"""


def _both(key: str) -> str:
    return _pair(TEXTS[key])


def _pair(texts: tuple[str, str]) -> str:
    """Both languages' words, of which the style shows the page's."""
    pairs = zip(LANGUAGES, texts, strict=True)
    return "".join(f'<span class="lang-{lang}" lang="{lang}">{escape(text)}</span>' for lang, text in pairs)


# Gradio's default theme, as the app shows it (its colours, radii, and its own font, which the app serves).
_STYLE = """
@font-face { font-family: "Source Sans Pro"; font-weight: 400; font-display: swap;
  src: url("__ROOT__/static/fonts/SourceSansPro/SourceSansPro-Regular.woff2") format("woff2"); }
@font-face { font-family: "Source Sans Pro"; font-weight: 600; font-display: swap;
  src: url("__ROOT__/static/fonts/SourceSansPro/SourceSansPro-SemiBold.woff2") format("woff2"); }
@font-face { font-family: "Source Sans Pro"; font-weight: 700; font-display: swap;
  src: url("__ROOT__/static/fonts/SourceSansPro/SourceSansPro-Bold.woff2") format("woff2"); }
html[lang="zh"] .lang-en, html:not([lang="zh"]) .lang-zh { display: none; }
:root { --text: #27272a; --subdued: #71717a; --page: #ffffff; --block: #ffffff; --border: #e4e4e7;
  --focus: #93c5fd; --ring: #eff6ff; --link: #2563eb; --primary: #f97316; --primary-hover: #ea580c;
  --error: #b91c1c; --error-fill: #fef2f2; --error-border: #b91c1c; --secondary: #e4e4e7;
  --secondary-hover: #d4d4d8; --secondary-text: #000000; color-scheme: light; }
@media (prefers-color-scheme: dark) {
  :root { --text: #f4f4f5; --subdued: #a1a1aa; --page: #0f0f11; --block: #27272a; --border: #3f3f46;
    --focus: #52525b; --ring: #3f3f46; --link: #3b82f6; --primary: #ea580c; --primary-hover: #c2410c;
    --error: #fef2f2; --error-fill: #18181b; --error-border: #ef4444; --secondary: #52525b;
    --secondary-hover: #3f3f46; --secondary-text: #ffffff; color-scheme: dark; }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 16px; background: var(--page); color: var(--text); font-size: 16px; line-height: 1.5;
  font-family: "Source Sans Pro", ui-sans-serif, system-ui, sans-serif; }
#language-switch { text-align: right; font-size: 15px; }
#language-switch a { color: var(--link); text-decoration: none; }
#language-switch a:hover { text-decoration: underline; }
html[lang="zh"] #language-switch a[lang="zh"], html:not([lang="zh"]) #language-switch a[lang="en"] {
  font-weight: 700; }
main { max-width: 400px; margin: 8vh auto 0; }
header { margin-bottom: 20px; }
h1 { margin: 0; font-size: 32px; font-weight: 700; line-height: 1.2; }
#purpose { margin: 4px 0 0; color: var(--subdued); }
form { display: flex; flex-direction: column; padding: 20px; background: var(--block);
  border: 1px solid var(--border); border-radius: 8px; }
#hint { margin: 0 0 16px; color: var(--subdued); font-size: 14px; }
label { margin-bottom: 6px; font-size: 14px; font-weight: 600; }
input { width: 100%; margin-bottom: 16px; padding: 10px; font: inherit; color: var(--text);
  background: var(--block); border: 1px solid var(--border); border-radius: 6px; outline: none; }
input:focus { border-color: var(--focus); box-shadow: 0 0 0 3px var(--ring); }
input[aria-invalid="true"] { border-color: var(--error-border); }
.message { margin: 0 0 16px; padding: 8px 12px; color: var(--error); background: var(--error-fill);
  border: 1px solid var(--error-border); border-radius: 6px; font-size: 15px; }
button, a.other { display: block; width: 100%; padding: 8px 16px; font: inherit; font-weight: 600;
  text-align: center; border: none; border-radius: 6px; cursor: pointer; }
button { color: #ffffff; background: var(--primary); }
button:hover, button:focus-visible { background: var(--primary-hover); }
button:disabled { opacity: 0.6; cursor: wait; }
#other-sign-ins { display: flex; flex-direction: column; gap: 8px; margin-top: 16px; }
.or { margin: 0; color: var(--subdued); font-size: 14px; text-align: center; }
a.other { color: var(--secondary-text); background: var(--secondary); text-decoration: none; }
a.other:hover { background: var(--secondary-hover); }
noscript .message { margin-top: 16px; }
"""

# The page's behaviour. In <head>, before the body is drawn, so that the page shows one language from the start.
SCRIPT = """(() => {
  const KEY = __KEY__;
  const known = (lang) => lang === "en" || lang === "zh";
  const stored = () => { try { return localStorage.getItem(KEY); } catch { return null; } };
  const keep = (lang) => {
    try { if (known(lang)) localStorage.setItem(KEY, lang); else localStorage.removeItem(KEY); } catch {}
  };
  const show = (lang) => {
    document.documentElement.lang = lang;
    const title = document.querySelector("title");
    if (title && title.dataset[lang]) document.title = title.dataset[lang];
  };
  // As the app decides (ragapp/ui/i18n.py): ?lang= is kept (any other value forgets the choice), then the
  // browser's kept choice, then its language.
  const asked = new URLSearchParams(window.location.search).get("lang");
  if (asked) keep(asked);
  const choice = stored();
  show(known(choice) ? choice : /^zh/i.test(navigator.language || "") ? "zh" : "en");

  const ready = () => {
    document.querySelectorAll("#language-switch a").forEach((link) => link.addEventListener("click", (event) => {
      event.preventDefault();
      const lang = new URLSearchParams(link.getAttribute("href")).get("lang");
      keep(lang);
      show(lang);
      const url = new URL(window.location.href);
      url.searchParams.set("lang", lang);  // kept on a reload, and taken to the app after signing in
      window.history.replaceState(null, "", url);
    }));
    const form = document.getElementById("signin");
    if (!form) return;
    const name = form.elements.namedItem("username");
    const password = form.elements.namedItem("password");
    const button = document.getElementById("signin-submit");
    const say = (key, field) => {
      form.querySelectorAll("[data-message]").forEach((message) => {
        message.hidden = message.dataset.message !== key;
      });
      [name, password].forEach((input) => {
        if (input === field) input.setAttribute("aria-invalid", "true");
        else input.removeAttribute("aria-invalid");
      });
      if (field) field.focus();
    };
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (!name.value.trim()) return say("empty_name", name);
      if (!password.value) return say("empty_password", password);
      say(null, null);
      button.disabled = true;
      try {
        // Gradio's own route: it checks the name and password with the engine and sets the sign-in cookies.
        const body = new URLSearchParams({ username: name.value, password: password.value });
        const reply = await fetch(form.action, { method: "POST", body, credentials: "same-origin" });
        if (reply.ok) {
          window.location.assign(form.dataset.home + window.location.search);
          return;
        }
        const why = reply.headers.get(__REFUSED__);
        if (reply.status === 400 && (why === "unavailable" || why === "no_role")) {
          say(why, null);  // not a wrong password: it stays, to try again
        } else if (reply.status === 400) {
          password.value = "";
          say(why === "throttled" ? "throttled" : "wrong", password);
        } else {
          say("failed", null);
        }
      } catch {
        say("failed", null);
      }
      button.disabled = false;
    });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
""".replace("__KEY__", json.dumps(STORAGE_KEY)).replace("__REFUSED__", json.dumps(REFUSED_HEADER))
