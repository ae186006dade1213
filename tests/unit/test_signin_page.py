"""The sign-in page's HTML and texts (ragapp.ui.signin): each text in both languages, the page's language, the
root path in every address, and the other ways to sign in listed under the form when there are some."""

from __future__ import annotations

import re

import pytest

from ragapp.ui.page_language import STORAGE_KEY
from ragapp.ui.signin import MESSAGES, REFUSED_HEADER, SCRIPT, TEXTS, SignInLink, page_language, sign_in_page

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_each_text_has_its_english_and_its_chinese(key: str) -> None:
    english, chinese = TEXTS[key]
    assert english.strip() and not CJK.search(english)
    assert CJK.search(chinese)


def test_the_page_holds_every_text_in_both_languages_and_shows_its_own() -> None:
    page = sign_in_page(lang="zh")
    assert page.startswith("<!doctype html>") and '<html lang="zh">' in page
    english, chinese = TEXTS["title"]  # in the <title>'s data attributes, for the script
    assert f'data-en="{english}" data-zh="{chinese}">{chinese}</title>' in page
    for key, (english, chinese) in TEXTS.items():
        if key not in ("title", "or", "hint_directory"):  # "or": only before other ways to sign in
            assert f'<span class="lang-en" lang="en">{english}</span><span class="lang-zh" lang="zh">{chinese}' in page
    for key in MESSAGES:  # the form's messages wait, hidden, for the script to show one
        assert f'<p class="message" data-message="{key}" hidden>' in page
    assert 'html[lang="zh"] .lang-en, html:not([lang="zh"]) .lang-zh { display: none; }' in page
    assert '<a href="?lang=en" lang="en">English</a> · <a href="?lang=zh" lang="zh">中文</a>' in page
    assert "<script>" not in page  # its script is a file: the policy may forbid inline ones one day
    assert '<html lang="en">' in sign_in_page(lang="fr")


def test_with_a_directory_the_hint_asks_for_the_company_account() -> None:
    hints = {key: '<span class="lang-en" lang="en">{}</span><span class="lang-zh" lang="zh">{}'.format(*TEXTS[key])
             for key in ("hint", "hint_directory")}  # fmt: skip
    assert hints["hint"] in sign_in_page() and hints["hint_directory"] not in sign_in_page()
    page = sign_in_page(lang="zh", directory=True)
    assert hints["hint_directory"] in page and hints["hint"] not in page


def test_every_address_starts_with_the_root_path() -> None:
    page = sign_in_page("/ragapp/")
    assert 'src="/ragapp/signin.js"' in page and 'action="/ragapp/login"' in page and 'data-home="/ragapp/"' in page
    assert 'url("/ragapp/static/fonts/SourceSansPro/SourceSansPro-Regular.woff2")' in page
    assert 'src="/signin.js"' in sign_in_page() and 'action="/login"' in sign_in_page()
    assert 'action="/a%22b/login"' in sign_in_page('/a"b') and 'url("/a%22b/static/fonts/' in sign_in_page('/a"b')


def test_other_ways_to_sign_in_are_listed_under_the_form_when_there_are_some() -> None:
    assert '<section id="other-sign-ins">' not in sign_in_page()
    link = SignInLink("/auth/oidc", ("Sign in with your company account", "使用公司账号登录"))
    page = sign_in_page("/ragapp", links=[link])
    assert page.index("</form>") < page.index('<section id="other-sign-ins">') < page.index(">或</span>")
    assert (
        '<a class="other" href="/ragapp/auth/oidc"><span class="lang-en" lang="en">Sign in with your company account'
        '</span><span class="lang-zh" lang="zh">使用公司账号登录</span></a>'
    ) in page


@pytest.mark.parametrize(
    ("asked", "accept", "lang"),
    [
        ("zh", "en-US", "zh"),
        ("en", "zh-CN,zh;q=0.9", "en"),
        (None, "zh-TW,en;q=0.5", "zh"),
        ("auto", "ZH", "zh"),
        (None, "en-GB,zh;q=0.9", "en"),
        (None, "", "en"),
    ],
)
def test_the_server_writes_the_page_in_the_asked_or_the_browsers_language(
    asked: str | None, accept: str, lang: str
) -> None:
    assert page_language(asked, accept) == lang


def test_the_script_reads_the_apps_language_choice_and_the_refusals_reason() -> None:
    assert f'const KEY = "{STORAGE_KEY}";' in SCRIPT
    assert f'reply.headers.get("{REFUSED_HEADER}")' in SCRIPT
    assert "__" not in SCRIPT  # every placeholder filled in
