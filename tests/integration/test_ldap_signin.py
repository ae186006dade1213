"""Sign-in against a real OpenLDAP directory (Debian's slapd, started and seeded by ``tests.slapd``): the user's
own bind checks the password, their groups give the role and the ``group:NAME`` knowledge-base rules, and a
changed group counts at the next sign-in. Names are escaped (``*)(`` finds nobody), an empty password never
binds, a directory that is down or silent refuses with a clear message, and failures are throttled like local
ones. Both ways of finding the user's entry: a DN template, and a search as a service account."""

from __future__ import annotations

import io
import re
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.ldap import NO_ANSWER, NOT_ASKED, LdapDirectory
from ragapp.accounts.service import WRONG, Accounts, open_accounts
from ragapp.accounts.store import UserStore
from ragapp.config import AuthSettings, LdapSettings, Settings
from ragapp.core.errors import ConfigError, DirectoryUnavailable, LoginRefused, LoginThrottled, NoRoleRefused
from tests.slapd import GROUPS, PEOPLE, READER_DN, READER_PASSWORD, USERS, Slapd

pytestmark = pytest.mark.integration

ROLES = {"rag-admins": "admin", "staff": "editor", "研发": "editor", "posix-staff": "editor"}


@pytest.fixture(scope="module")
def slapd() -> Iterator[Slapd]:
    server = Slapd()
    yield server
    server.stop()


def _template(url: str, **more: Any) -> LdapSettings:
    return LdapSettings(
        enabled=True, url=url, user_dn_template=f"uid={{name}},{PEOPLE}", group_search_base=GROUPS, **more
    )


def _search(url: str, **more: Any) -> LdapSettings:
    fields: dict[str, Any] = {
        "enabled": True, "url": url, "bind_dn": READER_DN, "bind_password": READER_PASSWORD,
        "user_search_base": PEOPLE, "user_filter": "(&(objectClass=inetOrgPerson)(uid={name}))",
        "group_search_base": GROUPS,
    }  # fmt: skip
    return LdapSettings(**{**fields, **more})


@pytest.fixture(params=["template", "search"])
def ways(request: pytest.FixtureRequest, slapd: Slapd) -> LdapSettings:
    """The directory's settings, once with a DN template and once with a service account's search."""
    return _template(slapd.url) if request.param == "template" else _search(slapd.url)


def _accounts(tmp_path: Path, ldap: LdapSettings, **auth: Any) -> Accounts:
    store = UserStore(tmp_path / "users.json", 4)
    store.add("root", "root password", "admin")
    settings = AuthSettings(group_roles=ROLES, **auth)  # type: ignore[arg-type]
    return Accounts(store, settings, directory=LdapDirectory(ldap))


def test_the_right_password_signs_in_with_the_role_and_groups_of_the_directory(
    tmp_path: Path, ways: LdapSettings
) -> None:
    accounts = _accounts(tmp_path, ways)
    alice = accounts.login("alice", USERS["alice"][0], "10.0.0.1")
    assert (alice.name, alice.role, alice.groups) == ("alice", "admin", frozenset({"rag-admins"}))
    bob = accounts.login("bob", USERS["bob"][0])
    assert (bob.role, bob.groups) == ("editor", frozenset({"staff"}))
    carol = accounts.login("carol", USERS["carol"][0])  # in no group: the default role
    assert (carol.role, carol.groups) == ("reader", frozenset())
    dora = accounts.login("dora", USERS["dora"][0])  # a password and a group name beyond ASCII
    assert (dora.role, dora.groups) == ("editor", frozenset({"研发"}))
    record = accounts.store.get("alice")
    assert record is not None and record.source == "ldap" and accounts.actor("alice") == alice
    assert accounts.login("ALICE", USERS["alice"][0]).name == "alice"  # the directory's spelling of the name
    assert [u.name for u in accounts.store.users()] == ["alice", "bob", "carol", "dora", "root"]


def test_a_wrong_password_an_unknown_name_and_an_empty_password_are_refused_alike(
    tmp_path: Path, ways: LdapSettings
) -> None:
    accounts = _accounts(tmp_path, ways, max_failed_logins=50)
    for name, password in [("alice", "wrong"), ("nobody", "whatever"), ("alice", ""), ("", USERS["alice"][0])]:
        with pytest.raises(LoginRefused) as refused:
            accounts.login(name, password)
        assert str(refused.value) == WRONG and type(refused.value) is LoginRefused
    assert [u.name for u in accounts.store.users()] == ["root"]  # nobody added


def test_an_empty_password_never_reaches_the_directory() -> None:
    # Some directories (Active Directory) take a name with no password as an anonymous bind, which "succeeds".
    # Pointed at a port nothing listens on: a call would say the directory is down; none is made.
    directory = LdapDirectory(_template(f"ldap://127.0.0.1:{_closed_port()}"))
    assert directory.authenticate("alice", "") is None
    with pytest.raises(DirectoryUnavailable):
        directory.authenticate("alice", "x")


@pytest.mark.parametrize("name", ["*", "al*", "*)(uid=*", "alice)(|(uid=*", "alice,ou=people", "alice\\"])
def test_a_name_is_looked_for_as_typed_never_read_as_part_of_the_query(
    tmp_path: Path, ways: LdapSettings, name: str
) -> None:
    accounts = _accounts(tmp_path, ways, max_failed_logins=50)
    with pytest.raises(LoginRefused, match=WRONG):  # alice's password, but a name that only matches as a query
        accounts.login(name, USERS["alice"][0])
    assert accounts.store.get("alice") is None


def test_the_name_is_the_directorys_name_attribute_whatever_the_user_is_searched_by(
    tmp_path: Path, slapd: Slapd
) -> None:
    accounts = _accounts(tmp_path, _search(slapd.url, user_filter="(mail={name})"))
    alice = accounts.login("alice@example.org", USERS["alice"][0])
    assert (alice.name, alice.role) == ("alice", "admin")


def test_a_directory_name_this_app_does_not_take_is_refused_and_nothing_kept(
    tmp_path: Path, ways: LdapSettings, caplog: pytest.LogCaptureFixture
) -> None:
    accounts = _accounts(tmp_path, ways)
    with pytest.raises(LoginRefused, match="not a name this app accepts"):
        accounts.login("jörg", USERS["jörg"][0])
    assert [u.name for u in accounts.store.users()] == ["root"]
    assert "ldap sign-in refused for 'jörg'" in caplog.text


def test_the_posix_group_of_a_user_is_found_by_member_uid(tmp_path: Path, slapd: Slapd) -> None:
    accounts = _accounts(tmp_path, _template(slapd.url, group_filter="(memberUid={name})"))
    erin = accounts.login("erin", USERS["erin"][0])
    assert (erin.role, erin.groups) == ("editor", frozenset({"posix-staff"}))


def test_a_changed_group_changes_the_role_at_the_next_sign_in(tmp_path: Path, slapd: Slapd) -> None:
    accounts = _accounts(tmp_path, _template(slapd.url))
    assert accounts.login("bob", USERS["bob"][0]).role == "editor"
    slapd.move("bob", leave="staff", join="rag-admins")
    try:
        bob = accounts.login("bob", USERS["bob"][0])
        assert (bob.role, bob.groups) == ("admin", frozenset({"rag-admins"}))
        assert accounts.actor("bob") == bob  # every later request sees it
    finally:
        slapd.move("bob", leave="rag-admins", join="staff")


def test_a_user_of_no_mapped_group_is_refused_when_there_is_no_default_role(tmp_path: Path, slapd: Slapd) -> None:
    accounts = _accounts(tmp_path, _template(slapd.url), default_role=None)
    with pytest.raises(NoRoleRefused, match="no group"):
        accounts.login("carol", USERS["carol"][0])
    assert accounts.store.get("carol") is None
    assert accounts.login("alice", USERS["alice"][0]).role == "admin"


def test_a_local_account_is_checked_locally_and_never_sent_to_the_directory(tmp_path: Path, slapd: Slapd) -> None:
    store = UserStore(tmp_path / "users.json", 4)
    store.add("bob", "local bob password", "reader")
    accounts = Accounts(store, AuthSettings(group_roles=ROLES), directory=LdapDirectory(_template(slapd.url)))  # type: ignore[arg-type]
    assert accounts.login("bob", "local bob password").role == "reader"
    with pytest.raises(LoginRefused, match=WRONG):  # the directory's password is not the local account's
        accounts.login("bob", USERS["bob"][0])
    record = store.get("bob")
    assert record is not None and record.source == "local"


def test_sign_ins_at_the_same_moment_each_get_their_own_answer(tmp_path: Path, ways: LdapSettings) -> None:
    accounts = _accounts(tmp_path, ways, max_failed_logins=50)
    tries = [(name, USERS[name][0]) for name in ("alice", "bob", "dora", "erin")] * 3 + [("bob", "wrong")] * 4

    def sign_in(name: str, password: str) -> str:
        try:
            return accounts.login(name, password).role
        except LoginRefused as refused:
            return str(refused)

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda t: sign_in(*t), tries))
    assert answers == ["admin", "editor", "editor", "reader"] * 3 + [WRONG] * 4


def test_failed_directory_sign_ins_are_throttled_like_local_ones(tmp_path: Path, slapd: Slapd) -> None:
    accounts = _accounts(tmp_path, _template(slapd.url), max_failed_logins=2)
    for _ in range(2):
        with pytest.raises(LoginRefused, match=WRONG):
            accounts.login("bob", "wrong", "10.0.0.7")
    with pytest.raises(LoginThrottled):  # the right password, too late: the name waits
        accounts.login("bob", USERS["bob"][0], "10.0.0.8")


def _closed_port() -> int:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        return int(unused.getsockname()[1])  # nothing listens there once this socket is closed


def _silent_port() -> Iterator[int]:
    """A port that takes the call and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield int(listener.getsockname()[1])


def test_a_directory_that_is_down_or_silent_refuses_with_a_clear_message(tmp_path: Path) -> None:
    down = _template(f"ldap://127.0.0.1:{_closed_port()}", connect_timeout_s=2)
    accounts = _accounts(tmp_path, down, max_failed_logins=1)
    for _ in range(2):  # not counted as failures: nobody guessed anything
        with pytest.raises(DirectoryUnavailable) as refused:
            accounts.login("alice", USERS["alice"][0])
        assert str(refused.value) == NO_ANSWER
    for port in _silent_port():
        silent = _accounts(tmp_path / "silent", _search(f"ldap://127.0.0.1:{port}", timeout_s=1))
        with pytest.raises(DirectoryUnavailable, match="did not answer"):
            silent.login("alice", USERS["alice"][0])
    assert accounts.login("root", "root password").role == "admin"  # local accounts still sign in


def test_tls_checks_the_directorys_certificate_and_host_name(
    tmp_path: Path, slapd: Slapd, caplog: pytest.LogCaptureFixture
) -> None:
    ldaps, plain = f"ldaps://localhost:{slapd.tls_port}", f"ldap://localhost:{slapd.port}"
    for trusted in (_template(ldaps, ca_file=slapd.ca_file), _search(plain, ca_file=slapd.ca_file, start_tls=True)):
        found = LdapDirectory(trusted).authenticate("alice", USERS["alice"][0])
        assert found is not None and found.groups == ("rag-admins",)
    untrusted = {  # settings: what the log says
        "a CA the system does not know": _template(ldaps),
        "an address the certificate does not name": _template(ldaps.replace("localhost", "127.0.0.1"),
                                                              ca_file=slapd.ca_file),
        "StartTLS, a CA the system does not know": _search(plain, start_tls=True),
        "StartTLS, an address the certificate does not name": _search(plain.replace("localhost", "127.0.0.1"),
                                                                      ca_file=slapd.ca_file, start_tls=True),
    }  # fmt: skip
    for case, settings in untrusted.items():
        caplog.clear()
        with pytest.raises(DirectoryUnavailable, match="did not answer"):
            LdapDirectory(settings).authenticate("alice", USERS["alice"][0])
        assert re.search(r"certificate verify failed|doesn't match", caplog.text), (case, caplog.text)


def test_a_refused_service_account_is_said_to_be_the_settings_fault(tmp_path: Path, slapd: Slapd) -> None:
    accounts = _accounts(tmp_path, _search(slapd.url, bind_password="not the reader's"))
    with pytest.raises(DirectoryUnavailable) as refused:
        accounts.login("alice", USERS["alice"][0])
    assert str(refused.value) == NOT_ASKED


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"url": ""}, "RAGAPP_LDAP__URL is empty"),
        ({"url": "http://ldap.example.org"}, "not an LDAP address"),
        ({"url": "ldaps://ldap.example.org", "start_tls": True, "user_dn_template": "uid={name}"}, "TLS already"),
        ({"url": "ldap://ldap.example.org"}, "USER_DN_TEMPLATE"),
        ({"url": "ldap://x", "user_dn_template": "uid=alice,ou=people"}, "must hold {name}"),
        ({"url": "ldap://x", "user_dn_template": "uid={user}"}, "may only hold {name}"),
        ({"url": "ldap://x", "user_search_base": "ou=people", "user_filter": "(uid=alice)"}, "must hold {name}"),
        ({"url": "ldap://x", "user_dn_template": "uid={name}", "group_search_base": "ou=g", "group_filter": "{x}"},
         "may only hold"),
        ({"url": "ldap://x", "user_dn_template": "uid={name}", "ca_file": "/nonexistent.pem"}, "not a file"),
    ],
)  # fmt: skip
def test_settings_that_cannot_work_stop_the_start_with_what_to_set(
    tmp_path: Path, fields: dict[str, Any], says: str
) -> None:
    settings = Settings(paths={"state_dir": tmp_path}, auth={"enabled": True}, ldap={"enabled": True, **fields})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=says.replace("{", r"\{").replace("}", r"\}")):
        open_accounts(settings)


def test_the_app_starts_with_the_directory_as_its_only_accounts_and_signs_its_users_in(
    tmp_path: Path, slapd: Slapd
) -> None:
    from ragapp.engine.build import _accounts as engine_accounts

    settings = Settings(
        paths={"state_dir": tmp_path},
        auth={"enabled": True, "group_roles": ROLES, "bcrypt_rounds": 4},
        ldap=_template(slapd.url),
    )  # type: ignore[arg-type]
    accounts = engine_accounts(settings, None, list)  # no local user: the directory's may sign in
    assert accounts is not None and accounts.login("alice", USERS["alice"][0]).role == "admin"
    off = Settings(paths={"state_dir": tmp_path}, ldap=_template(slapd.url))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="RAGAPP_AUTH__ENABLED"):
        engine_accounts(off, None, list)


def test_directory_users_are_kept_in_the_shared_database_for_every_replica(
    tmp_path: Path, slapd: Slapd, replica_db: Callable[[], Any]
) -> None:
    settings = Settings(
        paths={"state_dir": tmp_path},
        auth={"enabled": True, "group_roles": ROLES, "bcrypt_rounds": 4},
        ldap=_template(slapd.url),
    )  # type: ignore[arg-type]
    one, two = open_accounts(settings, replica_db()), open_accounts(settings, replica_db())
    assert one.store.path is None  # in the database, not a users file
    alice = one.login("alice", USERS["alice"][0])
    assert two.actor("alice") == alice  # the other replica sees her with her role and groups
    slapd.move("alice", leave="rag-admins", join="staff")
    try:
        assert two.login("alice", USERS["alice"][0]).role == "editor"  # her next sign-in, on either replica
        seen = one.actor("alice")
        assert seen is not None and seen.role == "editor"
    finally:
        slapd.move("alice", leave="staff", join="rag-admins")


def test_the_ldap_check_command_says_what_a_sign_in_would_give_and_keeps_nothing(
    tmp_path: Path, slapd: Slapd, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragapp.accounts.cli import main

    for key, value in {
        "PATHS__STATE_DIR": str(tmp_path), "LDAP__URL": slapd.url, "LDAP__USER_DN_TEMPLATE": f"uid={{name}},{PEOPLE}",
        "LDAP__GROUP_SEARCH_BASE": GROUPS, "AUTH__GROUP_ROLES": '{"rag-admins": "admin"}',
    }.items():  # fmt: skip
        monkeypatch.setenv(f"RAGAPP_{key}", value)

    def check(name: str, password: str) -> tuple[int, str]:
        monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
        code = main(["ldap-check", name, "--password-stdin"])
        out, err = capsys.readouterr()
        return code, out + err

    assert check("alice", USERS["alice"][0]) == (
        0, "alice: the directory takes the password; name alice, groups: rag-admins; role admin\n"
    )  # fmt: skip
    code, said = check("bob", USERS["bob"][0])
    assert code == 0 and said.endswith("groups: staff; role reader\n")  # staff maps to nothing: the default
    assert check("alice", "wrong")[0] == 1
    monkeypatch.delenv("RAGAPP_AUTH__GROUP_ROLES")  # (an environment variable cannot say null alone)
    monkeypatch.setenv("RAGAPP_AUTH", '{"group_roles": {"rag-admins": "admin"}, "default_role": null}')
    code, said = check("bob", USERS["bob"][0])
    assert code == 1 and "no role: refused" in said
    monkeypatch.setenv("RAGAPP_LDAP__URL", "ldapz://nowhere")
    code, said = check("alice", USERS["alice"][0])
    assert code == 2 and "not an LDAP address" in said
    assert not (tmp_path / "users.json").exists()  # nothing kept
