"""API keys over HTTP: made by ``python -m ragapp.users key``, kept as hashes, required with accounts on (and
off loopback), each acting with its user's role and knowledge-base access: a reader's delete is refused and
nothing is deleted, an editor's goes through."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import openai
import pytest

from ragapp.accounts.cli import main as users_main
from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore
from ragapp.serve.api.auth import KeyCheck, is_loopback
from tests.integration.api_helpers import KETTLE, LAMP, Served

pytestmark = pytest.mark.integration


def test_keys_are_required_with_accounts_on_and_act_as_their_user(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE}, accounts=True)
    kettle = served.docs["kettle.md"]
    with served.client() as anonymous:
        refused = anonymous.get("/v1/documents")
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        assert "python -m ragapp.users key NAME" in refused.json()["error"]["message"]
        assert refused.json()["error"]["type"] == "authentication_error"
        wrong = anonymous.get("/v1/documents", headers={"Authorization": "Bearer rag-not-a-key"})
        assert wrong.status_code == 401 and "not valid" in wrong.json()["error"]["message"]
        assert anonymous.get("/healthz").status_code == 200  # for load balancers, no key

    with served.client("rita") as reader:
        assert [d["id"] for d in reader.get("/v1/documents").json()] == [kettle]
        delete = reader.delete(f"/v1/documents/{kettle}")
        assert delete.status_code == 403 and delete.json()["error"]["type"] == "permission_error"
        assert "Your role (reader) may not delete documents" in delete.json()["error"]["message"]
        upload = reader.post("/v1/documents", files={"files": ("lamp.md", LAMP.encode())})
        assert upload.status_code == 403 and "may not upload" in upload.json()["error"]["message"]
        assert reader.get("/v1/traces", params={"everyone": "true"}).status_code == 403
    assert [d.doc_id for d in served.rig.engine.library.documents()] == [kettle]  # nothing deleted

    with served.client("eddie") as editor:
        assert editor.delete(f"/v1/documents/{kettle}").json()["deleted"] is True
    assert served.rig.engine.library.documents() == []

    client = openai.OpenAI(base_url=f"{served.url}/v1", api_key=served.keys["rita"], max_retries=0)
    served.rig.llm.enqueue("Nothing about that [1].")
    reply = client.chat.completions.create(model="ragapp-workflow", messages=[{"role": "user", "content": "Kettle?"}])
    assert reply.choices[0].message.content
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{served.url}/v1", api_key="wrong", max_retries=0).models.list()
    with served.client("rita") as reader:
        (mine,) = reader.get("/v1/traces").json()  # a key's traces are its user's, as in the UI
    assert served.rig.engine.observability.trace(mine["id"], "user:rita") is not None
    with served.client("ada") as admin:
        assert len(admin.get("/v1/traces", params={"everyone": "true"}).json()) >= 1


def test_a_knowledge_base_closed_to_a_user_is_unknown_to_their_key(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE}, accounts=True)
    served.rig.engine.accounts.store.set_kb_rule("default", KbRule(readers=("eddie",)))
    with served.client("rita") as reader:
        assert reader.get("/v1/documents").json() == [] and reader.get("/v1/knowledge-bases").json() == []
        assert reader.post("/v1/retrieve", json={"query": "kettle", "kbs": ["default"]}).status_code == 404
        assert reader.post("/v1/retrieve", json={"query": "kettle boils"}).json()["chunks"] == []
        assert reader.get(f"/v1/documents/{served.docs['kettle.md']}").status_code == 404
    with served.client("eddie") as editor:
        assert editor.post("/v1/retrieve", json={"query": "kettle boils"}).json()["chunks"]


def test_without_accounts_keys_are_needed_off_loopback_only(
    serve_api: Callable[..., Served], make_engine: Callable[..., object]
) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("example.org")
    rig = make_engine("check")
    assert KeyCheck(rig.engine, "0.0.0.0").required and not KeyCheck(rig.engine, "127.0.0.1").required  # type: ignore[attr-defined]

    open_one = serve_api()
    with open_one.client() as http:
        assert http.get("/v1/documents").status_code == 200
        assert http.get("/v1/documents", headers={"Authorization": "Bearer whatever"}).status_code == 200

    proxied = serve_api(ui={"trust_proxy": True, "proxy_ips": "127.0.0.1"})  # reachable through a proxy
    with proxied.client() as http:
        refused = http.get("/v1/knowledge-bases")
        assert refused.status_code == 401 and "python -m ragapp.users key NAME" in refused.text
    settings = proxied.rig.settings
    store = UserStore(settings.auth.users_path(settings.paths.state_dir), 4)
    _record, key = store.add_key("script")  # with accounts off a key names no account: it only needs a name
    with proxied.client() as http:
        assert http.get("/v1/knowledge-bases", headers={"Authorization": f"Bearer {key}"}).status_code == 200


def test_the_users_command_makes_lists_and_revokes_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    users = tmp_path / "users.json"
    monkeypatch.setenv("RAGAPP_AUTH__USERS_FILE", str(users))
    monkeypatch.setenv("RAGAPP_AUTH__BCRYPT_ROUNDS", "4")
    monkeypatch.setenv("RAGAPP_AUTH__ENABLED", "true")
    monkeypatch.setenv("RAGAPP_PATHS__STATE_DIR", str(tmp_path / "state"))  # where the command's audit log goes
    assert users_main(["key", "nobody"]) == 2  # accounts on: a key acts as an existing user
    UserStore(users, 4).add("alice", "alice password", "editor")
    capsys.readouterr()
    assert users_main(["key", "alice"]) == 0
    out, err = capsys.readouterr()
    key = out.strip()
    assert key.startswith("rag-") and len(key) > 40 and "revoke it with" in err
    assert key not in users.read_text() and UserStore(users, 4).key_user(key) == "alice"
    assert json.loads(users.read_text())["users"]["alice"]["role"] == "editor"  # the rest of the file kept

    assert users_main(["keys"]) == 0
    listed = capsys.readouterr().out
    (key_id,) = [line.split()[0] for line in listed.splitlines()]
    assert "alice" in listed and key not in listed
    assert users_main(["key", "alice", "--revoke", key_id]) == 0
    assert UserStore(users, 4).key_user(key) is None
    users_main(["key", "alice"])
    users_main(["key", "alice"])
    capsys.readouterr()
    assert users_main(["key", "alice", "--revoke", "all"]) == 0 and "revoked 2 key(s)" in capsys.readouterr().out
    UserStore(users, 4).add_key("alice")
    UserStore(users, 4).remove("alice")  # a removed user's keys go with them
    assert UserStore(users, 4).api_keys() == []
