"""The admin facet through the real engine (real users file, real stores; scripted model): only admins manage
users and knowledge-base access or see the settings, the admins can never lock themselves out, listings and
logs hold no password or hash, the settings view masks secrets, and with accounts off the user methods say how
to turn them on. Over HTTP, a reader's call to the Admin tab's add-user endpoint is refused."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.model import AdminError, KbRule
from ragapp.accounts.store import UserStore
from ragapp.core.access import ROLES, Actor
from ragapp.core.errors import AccessDenied, ConfigError
from ragapp.engine.admin import NOT_SET, SET

pytestmark = pytest.mark.integration

BOSS = Actor("boss", "admin")


@pytest.fixture
def accounts(make_engine: Callable[..., Any], tmp_path: Path) -> tuple[Any, Path]:
    """An engine with accounts on: boss (admin), rita (reader), eddie (editor)."""
    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    store.add("boss", "admin password", "admin")
    store.add("rita", "reader password", "reader", ("hr",))
    store.add("eddie", "editor password", "editor")
    rig = make_engine(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    return rig, users


def _actions() -> dict[str, Callable[[Any, Actor], object]]:
    return {
        "list users": lambda a, who: a.users(actor=who),
        "add user": lambda a, who: a.add_user("newbie", "a new password", "reader", actor=who),
        "change role": lambda a, who: a.set_role("rita", "editor", actor=who),
        "reset password": lambda a, who: a.set_password("rita", "another password", actor=who),
        "remove user": lambda a, who: a.remove_user("eddie", actor=who),
        "list kb access": lambda a, who: a.kb_access(actor=who),
        "set kb access": lambda a, who: a.set_kb_access("finance", "group:finance", "eddie", actor=who),
        "see settings": lambda a, who: a.settings_view(actor=who),
        "list sign-ins": lambda a, who: a.sign_ins(actor=who),
        "end sign-ins": lambda a, who: a.end_sign_ins_of("rita", actor=who),
    }


#                reader editor admin
ALLOWED = {
    "list users":     (False, False, True),
    "add user":       (False, False, True),
    "change role":    (False, False, True),
    "reset password": (False, False, True),
    "remove user":    (False, False, True),
    "list kb access": (False, False, True),
    "set kb access":  (False, False, True),
    "see settings":   (False, False, True),
    "list sign-ins":  (False, False, True),
    "end sign-ins":   (False, False, True),
}  # fmt: skip


@pytest.mark.parametrize("action", list(ALLOWED))
@pytest.mark.parametrize("role", ROLES)
def test_only_admins_may_administer(accounts: tuple[Any, Path], role: str, action: str) -> None:
    rig, users = accounts
    before = users.read_bytes()
    actor = rig.engine.actor({"reader": "rita", "editor": "eddie", "admin": "boss"}[role])
    act = _actions()[action]
    if ALLOWED[action][ROLES.index(role)]:  # type: ignore[arg-type]
        act(rig.engine.admin, actor)
    else:
        with pytest.raises(AccessDenied, match=f"Your role \\({role}\\) may not"):
            act(rig.engine.admin, actor)
        assert users.read_bytes() == before  # nothing changed


def test_an_admins_changes_reach_the_users_file_and_sign_in(accounts: tuple[Any, Path]) -> None:
    rig, users = accounts
    admin, engine = rig.engine.admin, rig.engine
    added = admin.add_user(" newbie ", "a new password", "reader", "hr, finance ,hr", actor=BOSS)
    assert (added.name, added.role, added.groups) == ("newbie", "reader", ("finance", "hr"))
    assert engine.login("newbie", "a new password") and engine.actor("newbie").groups == {"hr", "finance"}
    admin.set_role("newbie", "editor", actor=BOSS)
    assert engine.actor("newbie").role == "editor"  # counts from the next action
    admin.set_password("newbie", "changed password", actor=BOSS)
    assert engine.login("newbie", "changed password") and not engine.login("newbie", "a new password")
    admin.remove_user("newbie", actor=BOSS)
    with pytest.raises(AccessDenied, match="Sign in first"):
        engine.actor("newbie")
    with pytest.raises(AdminError, match="no user 'ghost'"):
        admin.set_role("ghost", "admin", actor=BOSS)
    with pytest.raises(Exception, match="at least 8 characters"):
        admin.add_user("shorty", "short", "reader", actor=BOSS)
    with pytest.raises(Exception, match="Unknown role"):
        admin.set_role("rita", "owner", actor=BOSS)

    view = admin.set_kb_access("finance", "group:finance, carol", "eddie", actor=BOSS)
    assert (view.readers, view.editors) == (("group:finance", "carol"), ("eddie",))
    assert UserStore(users, 4).kb_rules()["finance"] == KbRule(("carol", "group:finance"), ("eddie",))
    assert [v.kb for v in admin.kb_access(actor=BOSS) if v.has_rule] == ["finance"]
    admin.set_kb_access("finance", "", "", actor=BOSS)  # no one named: open again
    assert "finance" not in UserStore(users, 4).kb_rules()
    with pytest.raises(Exception, match="not allowed"):
        admin.set_kb_access("../etc", "rita", "", actor=BOSS)


def test_the_admins_can_never_lock_themselves_out(accounts: tuple[Any, Path]) -> None:
    rig, _users = accounts
    admin = rig.engine.admin
    with pytest.raises(AdminError, match="may not remove yourself"):
        admin.remove_user("boss", actor=BOSS)
    with pytest.raises(AdminError, match="may not demote yourself"):
        admin.set_role("boss", "editor", actor=BOSS)
    assert rig.engine.actor("boss").role == "admin"
    # With a second admin, each may demote or remove the other, never themselves, and never the last one.
    admin.set_role("eddie", "admin", actor=BOSS)
    eddie = rig.engine.actor("eddie")
    admin.set_role("boss", "reader", actor=eddie)
    with pytest.raises(AdminError, match="may not remove yourself"):
        admin.remove_user("eddie", actor=eddie)
    with pytest.raises(AdminError, match="eddie is the last admin"):  # an admin no longer in the file
        admin.remove_user("eddie", actor=Actor("ghost", "admin"))
    admin.set_password("eddie", "eddie's new password", actor=eddie)  # one's own password: fine


def test_listings_and_logs_hold_no_password_or_hash(accounts: tuple[Any, Path], caplog: Any) -> None:
    rig, users = accounts
    admin = rig.engine.admin
    with caplog.at_level(logging.INFO, logger="ragapp.accounts"):
        admin.add_user("newbie", "S3cret-Passphrase", "reader", actor=BOSS)
        admin.set_password("newbie", "Other-Passphrase", actor=BOSS)
        admin.set_role("newbie", "editor", actor=BOSS)
        admin.remove_user("newbie", actor=BOSS)
    listed = repr(admin.users(actor=BOSS)) + repr(admin.kb_access(actor=BOSS))
    hashes = [u["hash"] for u in json.loads(users.read_text("utf-8"))["users"].values()]
    for secret in ("S3cret-Passphrase", "Other-Passphrase", "admin password", "reader password", "$2b$", *hashes):
        assert secret not in listed
        assert secret not in caplog.text
    assert [u.name for u in admin.users(actor=BOSS)] == ["boss", "eddie", "rita"]
    assert "boss added user newbie" in caplog.text and "boss reset the password of newbie" in caplog.text
    assert "boss removed user newbie" in caplog.text


def test_the_settings_view_masks_secrets(make_engine: Callable[..., Any]) -> None:
    rig = make_engine(llm={"api_key": "sk-fake-0123456789abcdef", "base_url": "https://bob:hunter2@api.example.com/v1"})
    view = rig.engine.admin.settings_view(actor=rig.engine.actor(None))  # accounts off: the local admin
    text = json.dumps(view, ensure_ascii=False)
    assert "sk-fake-0123456789abcdef" not in text and "hunter2" not in text
    assert view["llm"]["api_key"] == SET
    assert view["llm"]["base_url"] == "https://bob:••••@api.example.com/v1"
    # Not secrets, though their names hold "token" and "key" in a word: shown as they are.
    assert view["llm"]["max_tokens"] == rig.settings.llm.max_tokens
    assert view["retrieval"]["min_keyword_score"] == rig.settings.retrieval.min_keyword_score
    assert view["paths"]["state_dir"] == str(rig.settings.paths.state_dir)
    assert view["auth"]["enabled"] is False
    empty = make_engine("empty", llm={"api_key": ""}).engine.admin.settings_view(actor=BOSS)
    assert empty["llm"]["api_key"] == NOT_SET


def test_with_accounts_off_user_methods_say_how_to_turn_them_on(make_engine: Callable[..., Any]) -> None:
    engine = make_engine().engine
    local = engine.actor(None)
    assert not engine.admin.accounts_on
    for name, act in _actions().items():
        if name == "see settings":
            assert act(engine.admin, local)
            continue
        with pytest.raises(ConfigError, match=r"Accounts are off.*RAGAPP_AUTH__ENABLED=true"):
            act(engine.admin, local)


# -- over HTTP, as a script would call it ---------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(accounts: tuple[Any, Path]) -> Iterator[tuple[Any, str, Path]]:
    from ragapp.ui.layout import build_ui

    rig, users = accounts
    port = _free_port()
    app = build_ui(rig.engine).queue()
    app.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, auth=rig.engine.login)
    try:
        yield rig, f"http://127.0.0.1:{port}/", users
    finally:
        app.close()


def test_a_reader_calling_add_user_is_refused_and_an_admin_is_not(served: tuple[Any, str, Path]) -> None:
    from gradio_client import Client

    rig, url, users = served
    before = users.read_bytes()
    reader = Client(url, auth=("rita", "reader password"), verbose=False)
    with pytest.raises(Exception, match=r"Your role \(reader\) may not manage users"):
        reader.predict("mallory", "mallory's password", "admin", "", api_name="/add_user")
    with pytest.raises(Exception, match=r"Your role \(reader\) may not manage users"):
        reader.predict("rita", "admin", api_name="/set_user_role")
    with pytest.raises(Exception, match=r"Your role \(reader\) may not manage users"):
        reader.predict("boss", api_name="/end_user_sign_ins")
    assert users.read_bytes() == before and rig.engine.admin.accounts_on

    admin = Client(url, auth=("boss", "admin password"), verbose=False)
    admin.predict("newbie", "a new password", "reader", "hr", api_name="/add_user")
    assert rig.engine.actor("newbie") == Actor("newbie", "reader", frozenset({"hr"}))
    with pytest.raises(Exception, match="may not remove yourself"):
        admin.predict("boss", api_name="/remove_user")


def test_the_tab_is_filled_for_admins_only(accounts: tuple[Any, Path]) -> None:
    from types import SimpleNamespace

    from ragapp.ui.admin import AdminHandlers

    rig, _users = accounts
    handlers = AdminHandlers(rig.engine)
    tab, note, users, picks, _kbs, _kb_picks, settings = handlers.load(SimpleNamespace(username="rita"))
    assert tab["visible"] is False and note == "" and users.empty and picks["choices"] == [] and settings is None
    for gone in ("ghost", None):  # removed since signing in, or no one: hidden too
        assert handlers.load(SimpleNamespace(username=gone))[0]["visible"] is False
    tab, _note, users, picks, _kbs, _kb_picks, settings = handlers.load(SimpleNamespace(username="boss"))
    assert tab["visible"] is True and list(users.iloc[:, 0]) == ["boss", "eddie", "rita"]
    assert picks["choices"] == ["boss", "eddie", "rita"] and settings["auth"]["enabled"] is True


def test_the_sign_ins_section_lists_them_for_admins_only(accounts: tuple[Any, Path]) -> None:
    from types import SimpleNamespace

    from ragapp.ui.admin_sessions import SignInHandlers

    rig, _users = accounts
    rig.engine.sign_ins.begin("rita's token", "rita", client="10.0.0.9", agent="Firefox")
    rig.engine.sign_ins.begin("boss's token", "boss")
    handlers = SignInHandlers(rig.engine)
    table, picks, users = handlers.load(SimpleNamespace(username="rita"))
    assert table.empty and picks["choices"] == [] and users["choices"] == []
    table, picks, users = handlers.load(SimpleNamespace(username="boss"))
    assert sorted(table["User"]) == ["boss", "rita"] and users["choices"] == ["boss", "rita"]
    assert "rita's token" not in table.to_string() and "10.0.0.9" in set(table["From"])
    (rita_id,) = [value for label, value in picks["choices"] if label.startswith("rita")]
    report, table, _picks, _users = handlers.end(rita_id, SimpleNamespace(username="boss"))
    assert "Signed rita out" in report and list(table["User"]) == ["boss"]
    assert rig.engine.sign_ins.user("rita's token") is None
    with pytest.raises(Exception, match="There is no sign-in"):
        handlers.end(rita_id, SimpleNamespace(username="boss"))
