"""Roles through the real engine (real stores; scripted model): every write facet refuses a role that may not
use it, before anything changes, and lets the roles that may; with accounts off everything works as before;
with accounts on the engine knows only the users in the file. The UI's handlers and Gradio's API call the
same facets with ``actor_of(request)``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore
from ragapp.core.access import ROLES, Actor
from ragapp.core.errors import AccessDenied, ConfigError
from ragapp.engine.intent_edits import IntentDraft

pytestmark = pytest.mark.integration

DOC = "# Kettle\n\nThe Orion Kettle K9 boils 1.7 litres in 3 minutes and 40 seconds.\n"


def _engine_with_a_document(make_engine: Callable[..., Any], tmp_path: Path) -> tuple[Any, str]:
    rig = make_engine()
    path = tmp_path / "kettle.md"
    path.write_text(DOC, "utf-8")
    (result,) = rig.engine.library.ingest([(path, path.name)])
    return rig, str(result.doc_id)


def _actions(tmp_path: Path) -> dict[str, Callable[[Any, str, Actor], object]]:
    upload = tmp_path / "lamp.md"
    upload.write_text("# Lamp\n\nThe L3 lamp charges in 3 hours.\n", "utf-8")
    draft = IntentDraft("lamps", None, "Lamps", "Questions about lamps", "How long does the lamp charge?",
                        "KB", ["default"], 5, None)  # fmt: skip
    return {
        "upload": lambda e, _doc, a: e.library.ingest([(upload, upload.name)], actor=a),
        "delete": lambda e, doc, a: e.library.delete(doc, actor=a),
        "move": lambda e, doc, a: e.library.move(doc, "manuals", actor=a),
        "add intent": lambda e, _doc, a: e.intents.save(draft, actor=a),
        "import intents": lambda e, _doc, a: e.intents.import_tree(e.intents.export(), actor=a),
    }


#               reader editor admin
ALLOWED = {
    "upload":         (False, True, True),
    "delete":         (False, True, True),
    "move":           (False, True, True),
    "add intent":     (False, True, True),
    "import intents": (False, True, True),
}  # fmt: skip


@pytest.mark.parametrize("action", list(ALLOWED))
@pytest.mark.parametrize("role", ROLES)
def test_each_role_may_use_exactly_its_write_facets(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Callable[[Any], Any], role: str, action: str
) -> None:
    rig, doc = _engine_with_a_document(make_engine, tmp_path)
    engine = rig.engine
    before = (engine.library.documents(), engine.intents.export())
    act = _actions(tmp_path)[action]
    if ALLOWED[action][ROLES.index(role)]:  # type: ignore[arg-type]
        act(engine, doc, Actor("someone", role))  # type: ignore[arg-type]
    else:
        with pytest.raises(AccessDenied, match=f"Your role \\({role}\\) may not"):
            act(engine, doc, Actor("someone", role))  # type: ignore[arg-type]
        assert (engine.library.documents(), engine.intents.export()) == before  # nothing changed
    assert store_snapshot(rig).agree()


def test_with_accounts_off_the_engine_acts_for_the_local_admin(make_engine: Callable[..., Any]) -> None:
    engine = make_engine().engine
    assert engine.accounts is None
    assert engine.actor(None).role == "admin" and engine.actor("whoever").role == "admin"


def test_with_accounts_on_only_the_users_in_the_file_are_known(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    users = tmp_path / "users.json"
    with pytest.raises(ConfigError, match="has no users"):
        make_engine("empty", auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    UserStore(users, 4).add("rita", "reader password", "reader")
    engine = make_engine("on", auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4}).engine
    assert engine.actor("rita") == Actor("rita", "reader")
    for nobody in (None, "", "mallory"):
        with pytest.raises(AccessDenied, match="Sign in first"):
            engine.actor(nobody)
    assert engine.login("rita", "reader password") and not engine.login("rita", "wrong password")
    assert not engine.login("mallory", "reader password")
