"""After an upload, Gradio's copy of the file is removed (it would otherwise stay on disk and stay served at its
upload URL after the document is deleted); a file outside Gradio's upload folder is never touched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gradio.utils import get_upload_folder

from ragapp.ui.handlers import Handlers


def test_the_uploaded_copy_is_removed_and_the_users_own_file_is_not(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_engine()
    cache = Path(get_upload_folder()) / f"ragapp-test-{tmp_path.name}"
    cache.mkdir(parents=True, exist_ok=True)
    uploaded = cache / "kettle.md"
    uploaded.write_text("# Kettle\n\nThe kettle boils water in 3 minutes.\n", "utf-8")
    own = tmp_path / "lid.md"
    own.write_text("# Lid\n\nThe lid opens wide.\n", "utf-8")
    try:
        summary, *_ = Handlers(rig.engine).upload([str(uploaded), str(own)], "default")
        assert "kettle.md" in summary and "lid.md" in summary
        assert not uploaded.exists()
        assert own.exists()
        assert sorted(d.name for d in rig.engine.library.documents()) == ["kettle.md", "lid.md"]
    finally:
        uploaded.unlink(missing_ok=True)
        cache.rmdir()
