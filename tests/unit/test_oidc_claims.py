"""The OpenID Connect pieces that need no provider: which settings are missing, reading names and groups out of
claims (nested ones too), the sign-in page's notice and the words of every refusal in both languages. The flow
itself runs against a real provider in tests/integration/test_oidc_signin.py."""

from __future__ import annotations

import re

import pytest

from ragapp.accounts.oidc import OidcClient, claim, group_names
from ragapp.config import Settings
from ragapp.config.auth import OidcSettings
from ragapp.core.errors import ConfigError
from ragapp.ui.oidc_texts import REFUSALS, sign_in_label
from ragapp.ui.signin import SignInLink, sign_in_page

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def test_the_settings_come_from_the_environment_with_the_secret_kept_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGAPP_OIDC__ENABLED", "true")
    monkeypatch.setenv("RAGAPP_OIDC__ISSUER", "https://sso.example.com/realms/staff")
    monkeypatch.setenv("RAGAPP_OIDC__CLIENT_SECRET", "s3cret")
    monkeypatch.setenv("RAGAPP_OIDC__GROUPS_CLAIM", "realm_access.roles")
    oidc = Settings().oidc
    assert oidc.enabled and oidc.issuer == "https://sso.example.com/realms/staff"
    assert oidc.client_secret is not None and oidc.client_secret.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(oidc) and oidc.groups_claim == "realm_access.roles"


def test_what_is_missing_is_named() -> None:
    assert OidcSettings().problems(accounts=False) == []  # off: nothing to check
    (missing,) = OidcSettings(enabled=True).problems(accounts=True)
    assert "RAGAPP_OIDC__ISSUER and RAGAPP_OIDC__CLIENT_ID are not set" in missing
    found = OidcSettings(enabled=True, issuer="https://sso", client_id="x", scopes="profile").problems(False)
    assert any("RAGAPP_AUTH__ENABLED=true" in p for p in found) and any("must include openid" in p for p in found)
    with pytest.raises(ConfigError, match="RAGAPP_OIDC__CLIENT_ID is not set"):
        OidcClient(OidcSettings(enabled=True, issuer="https://sso.example.com"))
    OidcClient(OidcSettings(enabled=True, issuer="https://sso.example.com", client_id="x"))  # reaches nothing yet
    OidcClient(OidcSettings(enabled=True, issuer="http://127.0.0.1:8080", client_id="x"))  # loopback: http is fine


def test_a_plain_http_issuer_elsewhere_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUTHLIB_INSECURE_TRANSPORT", raising=False)
    with pytest.raises(ConfigError, match="must be an https address"):
        OidcClient(OidcSettings(enabled=True, issuer="http://sso.example.com", client_id="x"))


def test_claims_are_read_by_path_and_groups_in_any_shape() -> None:
    claims = {"groups": ["a"], "realm_access": {"roles": ["admins", "x"]}, "https://example.com/groups": ["u"]}
    assert claim(claims, "realm_access.roles") == ["admins", "x"]
    assert claim(claims, "https://example.com/groups") == ["u"]  # a name with dots, taken whole
    assert claim(claims, "realm_access.missing") is None and claim(claims, "groups.deeper") is None
    assert group_names(["sales", " sales ", "", 3, "hr"]) == ("sales", "hr")
    assert group_names("sales") == ("sales",) and group_names(None) == () and group_names({"a": 1}) == ()


@pytest.mark.parametrize("reason", sorted(REFUSALS))
def test_each_refusal_is_said_in_english_and_chinese(reason: str) -> None:
    english, chinese = REFUSALS[reason]
    assert english.strip() and not CJK.search(english) and CJK.search(chinese)


def test_the_page_shows_a_notice_and_the_providers_button_in_both_languages() -> None:
    assert sign_in_label("your company account") == ("Sign in with your company account", "使用公司账号登录")
    assert sign_in_label("Okta") == ("Sign in with Okta", "使用Okta登录")
    page = sign_in_page("/rag", "en", [SignInLink("/oidc/login", sign_in_label("Okta"))], REFUSALS["expired"])
    assert 'href="/rag/oidc/login"' in page and "Sign in with Okta" in page
    notice = re.search(r'<p class="message" data-message="notice" id="signin-notice">(.*?)</p>', page)
    assert notice is not None and REFUSALS["expired"][0] in notice.group(1) and REFUSALS["expired"][1] in notice[1]
    assert 'id="signin-notice"' not in sign_in_page("/rag", "en")  # no notice unless asked
