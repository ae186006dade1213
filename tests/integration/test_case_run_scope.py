"""The Traces tab's "Run evaluation" searches as the signed-in user: a reader's saved test cases never rank (and
so never name) a document of a knowledge base they may not read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragapp.accounts.store import UserStore
from ragapp.core.access import Actor
from ragapp.ui.testcases import CaseHandlers

pytestmark = pytest.mark.integration

PLAN = "# Finance plan\n\nThe quarterly budget for the Orion project is 4.2 million euros.\n"
LEAVE = "# Leave policy\n\nEvery employee has 28 days of paid leave a year.\n"


def test_a_readers_evaluation_never_ranks_a_base_they_may_not_read(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    store.add("boss", "admin password", "admin")
    store.add("rita", "reader password", "reader")
    rig = make_engine(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    boss = Actor("boss", "admin")
    for name, text, kb in (("finance-plan.md", PLAN, "finance"), ("leave-policy.md", LEAVE, "hr")):
        (tmp_path / name).write_text(text, "utf-8")
        rig.engine.library.ingest([(tmp_path / name, name)], kb=kb, owner="boss", actor=boss)
    rig.engine.admin.set_kb_access("finance", ["boss"], ["boss"], actor=boss)
    handlers = CaseHandlers(rig.engine)
    rita = SimpleNamespace(username="rita", client=None)
    rig.engine.observability.save_test_case(
        "user:rita", "What is the Orion project's quarterly budget?", ["leave-policy.md"]
    )

    summary, _chart, frame = handlers.run(None, "zscore", 5, 20, 0.0, False, request=rita)

    shown = summary + frame.to_csv()
    assert "leave-policy.md" in shown  # the case ran, within hr
    assert "finance-plan.md" not in shown
