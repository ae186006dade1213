"""``/v1/sources`` on the real served app: an admin follows a folder, editors sync, pause and resume it,
readers are refused; the sync runs in the background and its report comes back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.api_helpers import Served
from tests.integration.sync_helpers import aged, text, wait_for, write

pytestmark = pytest.mark.integration

QUIET = {"sync": {"enabled": False, "settle_s": 0.0}}  # only the syncs the requests ask for


def test_sources_through_the_api(serve_api: Callable[..., Served], tmp_path: Path) -> None:
    folder = tmp_path / "handbook"
    for topic in ("kettles", "lamps"):
        aged(write(folder, f"products/{topic}.md", text(topic)))
    served = serve_api(accounts=True, **QUIET)
    body = {"name": "handbook", "kind": "folder", "location": str(folder), "kb": "handbook", "exclude": ["*.tmp"]}
    with served.client("ada") as admin, served.client("eddie") as editor, served.client("rita") as reader:
        assert reader.get("/v1/sources").status_code == 403
        refused = editor.post("/v1/sources", json=body)
        assert refused.status_code == 403 and "may not follow folders" in refused.json()["error"]["message"]
        bad = admin.post("/v1/sources", json=body | {"location": "relative"})
        assert bad.status_code == 400 and "absolute path" in bad.json()["error"]["message"]
        assert admin.post("/v1/sources", json=body | {"kind": "svn"}).status_code == 422

        created = admin.post("/v1/sources", json=body)  # its first sync starts in the background
        assert created.status_code == 201, created.text
        assert created.json()["kind"] == "folder" and created.json()["exclude"] == ["*.tmp"]

        def synced() -> bool:
            got = editor.get("/v1/sources/handbook").json()
            return got["state"] == "idle" and got["last_report"] is not None

        wait_for(synced, what="the first sync")
        got = editor.get("/v1/sources/handbook").json()
        assert sorted(got["last_report"]["added"]) == ["products/kettles.md", "products/lamps.md"]
        assert [s["name"] for s in editor.get("/v1/sources").json()] == ["handbook"]
        names = sorted(d["name"] for d in editor.get("/v1/documents", params={"kb": "handbook"}).json())
        assert names == ["products/kettles.md", "products/lamps.md"]

        paused = editor.post("/v1/sources/handbook/pause")
        assert paused.status_code == 200 and paused.json()["state"] == "paused" and paused.json()["paused"]
        aged(write(folder, "products/toasters.md", text("toasters")))
        resumed = editor.post("/v1/sources/handbook/resume")  # starts a sync
        assert resumed.status_code == 200 and resumed.json()["paused"] is False
        wait_for(lambda: editor.get("/v1/sources/handbook").json()["last_report"]["added"] == ["products/toasters.md"],
                 what="the sync after resume")  # fmt: skip

        (folder / "products/lamps.md").unlink()
        assert editor.post("/v1/sources/handbook/sync").status_code == 202
        wait_for(lambda: editor.get("/v1/sources/handbook").json()["last_report"]["removed"] == ["products/lamps.md"],
                 what="the sync asked for")  # fmt: skip

        missing = editor.post("/v1/sources/nothing/sync")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_source"
        assert editor.delete("/v1/sources/handbook").status_code == 403
        removed = admin.delete("/v1/sources/handbook", params={"delete_documents": "true"})
        assert removed.json() == {"name": "handbook", "removed": True, "documents_deleted": 2}
        assert admin.get("/v1/sources").json() == []
        assert admin.get("/v1/documents", params={"kb": "handbook"}).status_code == 404


def test_a_website_through_the_api_reports_its_reasons_as_codes(
    serve_api: Callable[..., Served], tmp_path: Path
) -> None:
    from tests.integration.web_site import reply, serving

    root = tmp_path / "site"
    write(root, "docs/index.html", "<h1>Kettles</h1><p>Kettles boil water.</p><a href='gone.html'>gone</a>"
                                   "<a href='picture.html'>picture</a>")  # fmt: skip
    served = serve_api(**QUIET)
    with serving(root) as site, served.client() as admin:
        site.routes["/docs/picture.html"] = reply(200, b"GIF89a", "image/gif")
        body = {"name": "kettles", "kind": "web", "location": f"{site.url}/docs/index.html", "kb": "kettles"}
        bad = admin.post("/v1/sources", json=body | {"location": "file:///etc/passwd"})
        assert bad.status_code == 400 and "not a website address" in bad.json()["error"]["message"]
        created = admin.post("/v1/sources", json=body)
        assert created.status_code == 201 and created.json()["kind"] == "web", created.text
        wait_for(lambda: admin.get("/v1/sources/kettles").json()["last_report"] is not None, what="the first crawl")
        report = admin.get("/v1/sources/kettles").json()["last_report"]
    assert report["added"] == [f"{site.url}/docs/index.html"] and report["requests"] == 4  # robots.txt and 3
    (refused,) = report["refused"]
    assert refused["said"] == {"code": "web.type", "values": {"url": f"{site.url}/docs/picture.html",
                                                              "type": "image/gif"}}  # fmt: skip
