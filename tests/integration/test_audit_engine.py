"""The audit log, driven through the engine as the UI and the API drive it: every audited action appears
exactly once, with the right actor, client address, target and outcome; refusals (a role, a wrong password, a
throttled sign-in) are recorded too; the question's text only with ``audit.log_questions``; on SQLite and on
PostgreSQL alike."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore
from ragapp.core.errors import AccessDenied, LoginRefused, LoginThrottled
from ragapp.engine.audit import AuditAction, AuditQuery, AuditRecord
from ragapp.engine.intent_edits import IntentDraft

pytestmark = pytest.mark.integration

A = AuditAction


def _engine(make_engine: Callable[..., Any], tmp_path: Path, backend: str, request: Any, **overrides: Any) -> Any:
    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    for user, role in (("ada", "admin"), ("eddie", "editor"), ("rita", "reader")):
        store.add(user, f"{user} password", role)
    if backend == "postgres":
        overrides["store"] = {"database_url": request.getfixturevalue("postgres_url")}
    auth = {"enabled": True, "users_file": users, "bcrypt_rounds": 4, "max_failed_logins": 2}
    return make_engine(auth=auth, **overrides).engine


def _records(engine: Any, **filters: Any) -> list[AuditRecord]:
    page = engine.audit.page(AuditQuery(limit=1000, **filters), actor=engine.actor("ada"))
    return [r for r in page.records if r.action != A.AUDIT_READ]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_every_audited_action_appears_once_with_its_actor_client_and_target(
    make_engine: Callable[..., Any], tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    engine = _engine(make_engine, tmp_path, backend, request)
    ada = engine.actor("ada", "10.0.0.7")
    doc = tmp_path / "kettle.md"
    doc.write_text("# Kettle\n\nThe Orion Kettle K9 boils 1.7 litres in 3 minutes.\n", "utf-8")
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text("# Leave\n\nTwenty days a year.\n", "utf-8")

    engine.sign_in("ada", "ada password", "10.0.0.7")
    (added,) = engine.library.ingest([(doc, "kettle.md")], kb="products", actor=ada)
    doc_id = str(added.doc_id)
    engine.library.set_tags(doc_id, ["Kitchen"], actor=ada)
    engine.library.reindex(doc_id, actor=ada)
    engine.library.move(doc_id, "appliances", actor=ada)
    engine.library.delete(doc_id, actor=ada)
    assert engine.enrichment is not None
    engine.enrichment.pause("products", actor=ada)
    engine.enrichment.resume("products", actor=ada)
    engine.sync.add("handbook", "folder", str(folder), "hr", actor=ada, start=False)
    engine.sync.run("handbook", actor=ada)
    engine.sync.pause("handbook", actor=ada)
    engine.sync.resume("handbook", actor=ada)
    engine.sync.remove("handbook", actor=ada)
    engine.admin.set_kb_access("hr", ["group:hr"], ["eddie"], actor=ada)
    engine.admin.add_user("bob", "bob password 1", "reader", ["hr"], actor=ada)
    engine.admin.set_role("bob", "editor", actor=ada)
    engine.admin.set_password("bob", "bob password 2", actor=ada)
    engine.admin.remove_user("bob", actor=ada)
    engine.intents.save(IntentDraft("a", name="A", kind="KB", kbs=["hr"]), actor=ada)
    engine.intents.save(IntentDraft("b", name="B", kind="KB", kbs=["hr"]), actor=ada)
    engine.intents.move("b", "a", actor=ada)
    engine.intents.save(IntentDraft("c", "a", "C", kind="KB", kbs=["hr"]), actor=ada)
    engine.intents.delete("c", actor=ada)
    engine.intents.import_tree(engine.intents.export("yaml"), actor=ada)
    engine.chat.retrieve("how many days of leave?", ["hr"], actor=ada)
    engine.admin.end_sign_ins_of("eddie", actor=ada)
    engine.sign_out("ada", "10.0.0.7")

    records = _records(engine)
    counts = Counter(r.action for r in records)
    every = set(A) - {A.AUDIT_READ, A.KEY_CREATE, A.KEY_REVOKE}  # API keys are made by the CLI (its own test)
    assert {a: counts[a.value] for a in every} == {a: 1 for a in every} | {A.INTENT_SAVE: 3}
    assert {(r.actor, r.role, r.client, r.outcome) for r in records} == {("ada", "admin", "10.0.0.7", "ok")}
    by_action = {r.action: r for r in records}
    assert by_action[A.SIGN_IN].target == "ada"
    assert by_action[A.UPLOAD].target == "products"
    assert by_action[A.UPLOAD].detail["files"] == ["kettle.md"]
    assert by_action[A.REINDEX].target == "products/kettle.md"
    assert by_action[A.MOVE].detail["to"] == "appliances"
    assert by_action[A.DELETE].target == "appliances/kettle.md"
    assert by_action[A.ENRICH_PAUSE].target == "products" and by_action[A.ENRICH_RESUME].target == "products"
    assert by_action[A.SOURCE_ADD].target == "handbook"
    assert by_action[A.SOURCE_ADD].detail["kb"] == "hr"
    assert by_action[A.KB_RULE].target == "hr"
    assert by_action[A.KB_RULE].detail == {"readers": ["group:hr"], "editors": ["eddie"]}
    assert by_action[A.USER_ROLE].detail == {"role": "editor"}
    assert by_action[A.USER_PASSWORD].detail == {}  # never the password
    assert by_action[A.INTENT_DELETE].target == "c"
    assert by_action[A.SEARCH].target == "hr"
    assert by_action[A.SIGN_IN_END].target == "eddie" and by_action[A.SIGN_IN_END].detail == {"all": True, "ended": 0}
    assert "question" not in by_action[A.SEARCH].detail  # not the text, by default
    # newest first
    assert (records[0].action, records[-1].action) == (A.SIGN_OUT, A.SIGN_IN)


def test_refusals_are_recorded_with_who_tried(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    engine = _engine(make_engine, tmp_path, "sqlite", None)
    rita = engine.actor("rita", "192.0.2.1")
    doc = tmp_path / "kettle.md"
    doc.write_text("# Kettle\n\nBoils water.\n", "utf-8")
    (added,) = engine.library.ingest([(doc, "kettle.md")], actor=engine.actor("ada"))

    with pytest.raises(AccessDenied):
        engine.library.delete(str(added.doc_id), actor=rita)
    with pytest.raises(AccessDenied):
        engine.admin.set_role("eddie", "admin", actor=rita)
    with pytest.raises(AccessDenied):
        engine.audit.page(AuditQuery(), actor=rita)
    with pytest.raises(LoginRefused):
        engine.sign_in("rita", "not her password", "192.0.2.9")
    with pytest.raises(LoginRefused):
        engine.sign_in("nobody", "guess", "192.0.2.9")
    with pytest.raises(LoginThrottled):  # two failures from that address: it waits now, whatever the name
        engine.sign_in("rita", "rita password", "192.0.2.9")

    refused = _records(engine, outcome="refused")
    assert [(r.actor, r.role, r.client, r.action, r.target) for r in reversed(refused)] == [
        ("rita", "reader", "192.0.2.1", A.DELETE, "default/kettle.md"),
        ("rita", "reader", "192.0.2.1", A.USER_ROLE, "eddie"),
        ("rita", "", "192.0.2.9", A.SIGN_IN, "rita"),
        ("nobody", "", "192.0.2.9", A.SIGN_IN, "nobody"),
        ("rita", "", "192.0.2.9", A.SIGN_IN, "rita"),
    ]
    assert refused[0].detail["throttled"] is True
    assert "throttled" not in refused[1].detail
    assert "may not delete documents" in refused[-1].detail["reason"]
    # reading the log is recorded too, the refused try included
    reads = engine.audit.page(AuditQuery(action=A.AUDIT_READ), actor=engine.actor("ada")).records
    assert [(r.actor, r.outcome) for r in reversed(reads)] == [("rita", "refused"), ("ada", "ok")]
    assert len(_records(engine, action=A.DELETE)) == 1  # the refused delete, once; the document is still there
    assert len(engine.library.documents()) == 1


@pytest.mark.parametrize("log_questions", [False, True])
def test_a_questions_scope_is_recorded_and_its_text_only_when_the_setting_says(
    make_engine: Callable[..., Any], tmp_path: Path, log_questions: bool
) -> None:
    engine = _engine(make_engine, tmp_path, "sqlite", None, audit={"log_questions": log_questions})
    ada = engine.actor("ada")
    doc = tmp_path / "kettle.md"
    doc.write_text("# Kettle\n\nBoils water.\n", "utf-8")
    engine.library.ingest([(doc, "kettle.md")], kb="products", actor=ada)
    engine.admin.set_kb_access("secret", ["ada"], [], actor=ada)
    eddie = engine.actor("eddie", "198.51.100.4")
    question = "What is in the secret plans, 机密?"

    list(engine.chat.ask(question + " " + "x" * 100_000, kbs=["secret", "products"], actor=eddie))
    engine.chat.retrieve(question, None, actor=eddie)

    searches = _records(engine, action=A.SEARCH)
    assert [(r.actor, r.client, r.target) for r in reversed(searches)] == [
        ("eddie", "198.51.100.4", "products"),  # the scope as narrowed: eddie may not read "secret"
        ("eddie", "198.51.100.4", "products"),  # all he may read
    ]
    assert searches[1].detail["kbs"] == ["products"]
    assert searches[1].detail["mode"] == "workflow"
    if log_questions:
        assert searches[0].detail["question"] == question
        assert searches[1].detail["question"].startswith(question)
        assert len(searches[1].detail["question"]) <= 2_000  # a long question is cut
    else:
        assert all("question" not in r.detail and question not in str(r.detail) for r in searches)


def test_a_company_sign_in_is_recorded_and_a_refused_one_too(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    engine = _engine(make_engine, tmp_path, "sqlite", None)
    engine.sign_in_external("olga", ["staff"], "oidc", "203.0.113.5")
    with pytest.raises(LoginRefused):  # a local account is never taken over by a company sign-in
        engine.sign_in_external("rita", ["staff"], "oidc", "203.0.113.6")
    got = [(r.actor, r.role, r.client, r.outcome, r.detail.get("method")) for r in _records(engine)]
    assert got == [("rita", "", "203.0.113.6", "refused", "oidc"), ("olga", "reader", "203.0.113.5", "ok", "oidc")]


def test_with_the_log_off_nothing_is_recorded_or_written(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    engine = _engine(make_engine, tmp_path, "sqlite", None, audit={"enabled": False})
    engine.sign_in("ada", "ada password", "10.0.0.7")
    engine.chat.retrieve("anything", None, actor=engine.actor("ada"))
    assert not engine.audit.enabled
    assert engine.audit.page(AuditQuery(), actor=engine.actor("ada")).total == 0
    assert not (engine.settings.paths.state_dir / "audit.sqlite3").exists()
    with pytest.raises(AccessDenied):  # still admins only
        engine.audit.page(AuditQuery(), actor=engine.actor("rita"))
