"""The audit log over HTTP and from the command line: the served app records what API callers do with the
address they called from; ``GET /v1/audit`` answers admins only, as JSON or CSV; ``python -m ragapp.users``
records its changes as the user "cli"."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.cli import main as users_main
from ragapp.accounts.store import UserStore
from ragapp.audit import AuditQuery, AuditStore
from tests.integration.api_helpers import KETTLE, Served

pytestmark = pytest.mark.integration


def test_api_calls_are_recorded_with_their_client_and_only_admins_read_the_log(
    serve_api: Callable[..., Served],
) -> None:
    served = serve_api({"kettle.md": KETTLE}, accounts=True)
    kettle = served.docs["kettle.md"]
    with served.client("rita") as reader:
        assert reader.post("/v1/retrieve", json={"query": "how long to boil?", "kbs": ["default"]}).status_code == 200
        assert reader.delete(f"/v1/documents/{kettle}").status_code == 403
        assert reader.post("/v1/documents", files={"files": ("lamp.md", b"# Lamp\n")}).status_code == 403
        refused = reader.get("/v1/audit")
        assert refused.status_code == 403 and refused.json()["error"]["type"] == "permission_error"
        assert reader.get("/v1/audit", params={"format": "csv"}).status_code == 403
    with served.client("eddie") as editor:
        assert editor.delete(f"/v1/documents/{kettle}").status_code == 200

    with served.client("ada") as admin:
        answer = admin.get("/v1/audit", params={"user": "rita"})
        assert answer.status_code == 200, answer.text
        page = answer.json()
        got = [(r["actor"], r["client"], r["action"], r["target"], r["outcome"]) for r in page["records"]]
        assert got == [
            ("rita", "127.0.0.1", "audit read", "", "refused"),
            ("rita", "127.0.0.1", "audit read", "", "refused"),
            ("rita", "127.0.0.1", "upload", "", "refused"),  # refused before the form (and its kb) is read
            ("rita", "127.0.0.1", "delete", "default/kettle.md", "refused"),
            ("rita", "127.0.0.1", "search", "default", "ok"),
        ]
        assert page["total"] == 5
        assert "question" not in page["records"][-1]["detail"]
        deletes = admin.get("/v1/audit", params={"action": "delete", "outcome": "ok"}).json()["records"]
        assert [(r["actor"], r["role"], r["target"]) for r in deletes] == [("eddie", "editor", "default/kettle.md")]
        paged = admin.get("/v1/audit", params={"limit": 1, "offset": 1, "user": "rita"}).json()
        assert [r["action"] for r in paged["records"]] == ["audit read"] and paged["total"] == 5
        bad = admin.get("/v1/audit", params={"action": "fly"})
        assert bad.status_code == 422 and "action" in bad.json()["error"]["message"]

        as_csv = admin.get("/v1/audit", params={"format": "csv", "user": "eddie"})
        assert as_csv.headers["content-type"].startswith("text/csv")
        assert "attachment" in as_csv.headers["content-disposition"]
        rows = list(csv.reader(io.StringIO(as_csv.text.removeprefix("\ufeff"))))
        assert rows[0][:3] == ["id", "when (UTC)", "user"]
        assert [(r[2], r[5], r[6]) for r in rows[1:]] == [("eddie", "delete", "default/kettle.md")]
        accepted = admin.get("/v1/audit", params={"user": "eddie"}, headers={"Accept": "text/csv"})
        assert accepted.headers["content-type"].startswith("text/csv")
        # the admin's own reading is on the record, with the filters used
        reads = admin.get("/v1/audit", params={"user": "ada", "action": "audit read"}).json()["records"]
        assert len(reads) == 5 and reads[0]["detail"] == {"actor": "eddie", "format": "csv"}  # (not the 422)
        assert {r["detail"].get("format") for r in reads} == {None, "csv"}


def test_the_users_command_records_its_changes_as_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    users, state = tmp_path / "users.json", tmp_path / "state"
    monkeypatch.setenv("RAGAPP_PATHS__STATE_DIR", str(state))
    monkeypatch.setenv("RAGAPP_AUTH__USERS_FILE", str(users))
    monkeypatch.setenv("RAGAPP_AUTH__BCRYPT_ROUNDS", "4")
    monkeypatch.setenv("RAGAPP_AUTH__ENABLED", "true")
    monkeypatch.setattr("sys.stdin", io.StringIO("alice password\n"))
    assert users_main(["add", "alice", "--role", "editor", "--password-stdin"]) == 0
    assert users_main(["key", "alice"]) == 0
    (key,) = UserStore(users, 4).api_keys()
    assert users_main(["key", "alice", "--revoke", key.id]) == 0
    assert users_main(["role", "nobody", "admin"]) == 2  # fails: recorded as failed
    assert users_main(["kb", "finance", "--readers", "group:finance"]) == 0
    assert users_main(["list"]) == 0  # a listing changes nothing: not recorded
    capsys.readouterr()

    store = AuditStore(state / "audit.sqlite3").start()
    records = list(reversed(store.query(AuditQuery())))
    store.close()
    assert [(r.actor, r.action, r.target, r.outcome) for r in records] == [
        ("cli", "user add", "alice", "ok"),
        ("cli", "API key create", "alice", "ok"),
        ("cli", "API key revoke", "alice", "ok"),
        ("cli", "user role", "nobody", "failed"),
        ("cli", "knowledge-base rule", "finance", "ok"),
    ]
    assert records[1].detail == {"key_id": key.id} and records[2].detail == {"key_id": key.id}
    assert "alice password" not in str([r.detail for r in records])


def test_a_change_made_in_the_page_is_recorded_with_the_browsers_address(serve_api: Callable[..., Served]) -> None:
    from gradio_client import Client

    served = serve_api({"kettle.md": KETTLE}, accounts=True)
    kettle = served.docs["kettle.md"]
    reader = Client(f"{served.url}/", auth=("rita", "rita password"), verbose=False)
    with pytest.raises(Exception, match=r"may not delete documents"):
        reader.predict(kettle, [], api_name="/delete_document")
    with pytest.raises(Exception, match=r"may not read the audit log"):
        reader.predict("", "all", "", "all", "", "", api_name="/audit_log")
    Client(f"{served.url}/", auth=("eddie", "eddie password"), verbose=False).predict(
        kettle, [], api_name="/delete_document"
    )
    engine = served.rig.engine
    page = engine.audit.page(AuditQuery(), actor=engine.actor("ada"))
    got = [(r.actor, r.client, r.action, r.target, r.outcome) for r in reversed(page.records)]
    assert got[-5:] == [
        ("rita", "127.0.0.1", "sign-in", "rita", "ok"),
        ("rita", "127.0.0.1", "delete", "default/kettle.md", "refused"),
        ("rita", "127.0.0.1", "audit read", "", "refused"),
        ("eddie", "127.0.0.1", "sign-in", "eddie", "ok"),
        ("eddie", "127.0.0.1", "delete", "default/kettle.md", "ok"),
    ]


def test_an_mcp_search_is_recorded_with_its_user_and_address(serve_api: Callable[..., Served]) -> None:
    from ragapp.agent.mcp_tools import mcp_session
    from tests.integration.api_helpers import run_async

    served = serve_api({"kettle.md": KETTLE}, accounts=True)

    async def search() -> None:
        headers = {"Authorization": f"Bearer {served.keys['rita']}"}
        async with mcp_session(url=f"{served.url}/mcp", headers=headers) as client:
            result = await client.call_tool("search", {"query": "How fast does the kettle boil?"})
            assert not result.isError, result.content

    run_async(search)
    engine = served.rig.engine
    (record,) = engine.audit.page(AuditQuery(action="search"), actor=engine.actor("ada")).records
    assert (record.actor, record.role, record.client, record.target) == ("rita", "reader", "127.0.0.1", "(all)")
    assert record.detail["mode"] == "retrieve"


def test_a_browsers_sign_in_and_sign_out_are_recorded(serve_api: Callable[..., Served]) -> None:
    import httpx

    served = serve_api(accounts=True)
    with httpx.Client(base_url=served.url, timeout=30) as browser:
        assert browser.post("/login", data={"username": "rita", "password": "nope"}).status_code != 200
        assert browser.post("/login", data={"username": "rita", "password": "rita password"}).status_code == 200
        browser.get("/logout")
        browser.get("/logout")  # signed out already: nothing more to record
    engine = served.rig.engine
    page = engine.audit.page(AuditQuery(actor="rita"), actor=engine.actor("ada"))
    assert [(r.action, r.client, r.outcome) for r in reversed(page.records)] == [
        ("sign-in", "127.0.0.1", "refused"),
        ("sign-in", "127.0.0.1", "ok"),
        ("sign-out", "127.0.0.1", "ok"),
    ]


def test_the_sync_command_records_its_changes_as_cli(
    make_settings: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragapp.sync.cli import main as sync_main

    settings = make_settings(sync={"enabled": False})
    folder = tmp_path / "handbook"
    folder.mkdir()
    assert sync_main(["add", "handbook", "--folder", str(folder), "--kb", "hr"], settings) == 0
    assert sync_main(["pause", "handbook"], settings) == 0
    assert sync_main(["resume", "handbook"], settings) == 0
    assert sync_main(["remove", "nothing"], settings) == 2
    assert sync_main(["remove", "handbook"], settings) == 0
    assert sync_main(["list"], settings) == 0
    capsys.readouterr()
    store = AuditStore(settings.paths.state_dir / "audit.sqlite3").start()
    records = list(reversed(store.query(AuditQuery())))
    store.close()
    assert [(r.actor, r.action, r.target, r.outcome) for r in records] == [
        ("cli", "source add", "handbook", "ok"),
        ("cli", "source pause", "handbook", "ok"),
        ("cli", "source resume", "handbook", "ok"),
        ("cli", "source remove", "nothing", "failed"),
        ("cli", "source remove", "handbook", "ok"),
    ]
    assert records[0].detail == {"kb": "hr", "location": str(folder), "exit_status": 0}
