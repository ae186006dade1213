"""The sidebar's exports: the open chat as Markdown or JSON, or all the user's chats as a zip, to download.

The engine makes the file (``Engine.conversations.export``, only ever the owner's own chats); this writes it to
a folder of its own under the system's temporary folder, where Gradio may serve it from, and hands Gradio the
path. Gradio copies it into its cache at once (cleared hourly, see ``ragapp.ui.layout``), so each export's copy
here is removed by the next export once it is ``KEEP_S`` old, and the folder when the app stops.
"""

import atexit
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import gradio as gr

from ragapp.engine.engine import Engine
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.state import Session, actor_of, owner_of

KEEP_S = 600.0
FORMAT_CHOICES = [(t("chats.export_markdown"), "markdown"), (t("chats.export_json"), "json")]
NO_CHAT_OPEN = both(
    "There is no saved chat to export: ask a question (the chat is kept after the answer), or pick one in the list.",
    "没有可导出的已保存对话：先提一个问题（回答后对话会自动保存），或在列表中选择一个对话。",
)
NO_CHATS = both(
    "You have no saved chats yet: each chat is kept once a question is answered.",
    "你还没有已保存的对话：问题得到回答后，对话就会保存。",
)
NOT_FOUND = both(
    "That chat is gone (deleted, or the oldest beyond the 200 kept): pick another in the list.",
    "该对话已不在（已删除，或超出保留的 200 个而被移除）：请在列表中另选一个。",
)


class ChatExports:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._root: Path | None = None
        self._lock = threading.Lock()

    @user_errors
    def export(
        self,
        picked: str | None,
        session: Session | None,
        fmt: str | None,
        stored: str | None,
        request: gr.Request | None = None,
    ) -> Any:
        """The chat picked in the list (else the one open) as a file to download, in ``fmt`` (Markdown unless
        "json")."""
        conversation_id = picked or (session.conversation_id if session is not None else None)
        if not conversation_id:
            raise gr.Error(NO_CHAT_OPEN)
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        made = self.engine.conversations.export(
            owner, conversation_id, "json" if fmt == "json" else "markdown", actor=actor
        )
        if made is None:
            raise gr.Error(NOT_FOUND)
        return gr.update(value=str(self._written(made.name, made.data)), visible=True)

    @user_errors
    def export_all(self, stored: str | None, request: gr.Request | None = None) -> Any:
        """All the user's chats as a zip to download."""
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        made = self.engine.conversations.export_all(owner, actor=actor)
        if made.count == 0:
            raise gr.Error(NO_CHATS)
        chats = f"{made.count} chat{'s' if made.count != 1 else ''}"
        gr.Info(both(f"Exported {chats}: download the zip below", f"已导出 {made.count} 个对话，请在下方下载压缩包"))
        return gr.update(value=str(self._written(made.name, made.data)), visible=True)

    @staticmethod
    def withdrawn() -> Any:
        """The download put away (another chat was opened, or a new one started)."""
        return gr.update(value=None, visible=False)

    def _written(self, name: str, data: bytes) -> Path:
        """``data`` saved as ``name`` in a new folder (two exports of the same name at once never meet)."""
        with self._lock:
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="ragapp-chat-exports-"))
                atexit.register(shutil.rmtree, self._root, True)
            root = self._root
        self._sweep(root)
        path = Path(tempfile.mkdtemp(dir=root)) / name
        path.write_bytes(data)
        return path

    @staticmethod
    def _sweep(root: Path) -> None:
        cutoff = time.time() - KEEP_S
        for folder in root.iterdir():
            try:
                if folder.stat().st_mtime < cutoff:
                    shutil.rmtree(folder, ignore_errors=True)
            except OSError:  # removed meanwhile by another export's sweep
                continue
