"""The Admin tab's sign-ins: every browser signed in now (who, since when, until when, last seen, from where, how),
and buttons to sign one out, or all of a user's. Kept apart from ``ragapp.ui.admin``, which places it in the
users' column (shown to admins only, with accounts on).

The sign-ins are the engine's (``engine.admin.sign_ins``: kept in the database, never with their tokens), so an
admin on any replica sees them all; one ended here is refused on its next request (on another replica within
``auth.session_recheck_s``). Every handler acts as the signed-in user and the engine checks the role.
"""

from datetime import UTC, datetime
from typing import Any

import gradio as gr
import pandas as pd

from ragapp.core.errors import AccessDenied, RagAppError
from ragapp.engine.engine import Engine
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.markup import escape_text
from ragapp.ui.state import actor_of

# English names: the page renames them in Chinese (ragapp.ui.page_language.HEADERS).
SIGN_IN_HEADERS = ["User", "Signed in (UTC)", "Expires (UTC)", "Last seen (UTC)", "From", "How", "Browser", "ID"]
AGENT_SHOWN = 40  # characters of the user agent in the table


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")


def _frame(rows: list[list[Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=SIGN_IN_HEADERS)


class SignInHandlers:
    """What the section's events do: engine calls as the signed-in user, results as component values."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _values(self, request: gr.Request | None) -> tuple[Any, ...]:
        actor = actor_of(self.engine, request)
        listed = self.engine.admin.sign_ins(actor=actor)
        rows = [
            [s.user, _when(s.started), _when(s.expires), _when(s.last_seen), s.client or "?", s.method,
             s.agent[:AGENT_SHOWN], s.id]
            for s in listed
        ]  # fmt: skip
        choices = [(f"{s.user} · {s.client or '?'} · {_when(s.started)} · {s.id}", s.id) for s in listed]
        users = sorted({s.user for s in listed})
        return _frame(rows), gr.update(choices=choices, value=None), gr.update(choices=users, value=None)

    def load(self, request: gr.Request | None = None) -> tuple[Any, ...]:
        """The list, for an admin; empty for anyone else (the section is hidden from them anyway)."""
        try:
            return self._values(request)
        except (AccessDenied, RagAppError):
            nothing = gr.update(choices=[], value=None)
            return _frame([]), nothing, nothing

    @user_errors
    def end(self, session_id: str | None, request: gr.Request | None = None) -> tuple[Any, ...]:
        actor = actor_of(self.engine, request)
        if not session_id:
            raise gr.Error(both("Pick a sign-in from the list first.", "请先从列表中选择一个登录。"))
        user = escape_text(self.engine.admin.end_sign_in(session_id, actor=actor))
        note = f"✅ {both(f'Signed {user} out of that browser', f'已让 {user} 在该浏览器上退出登录')}"
        return note, *self._values(request)

    @user_errors
    def end_all(self, name: str | None, request: gr.Request | None = None) -> tuple[Any, ...]:
        actor = actor_of(self.engine, request)
        if not name:
            raise gr.Error(both("Pick a user first.", "请先选择用户。"))
        ended = self.engine.admin.end_sign_ins_of(name, actor=actor)
        user = escape_text(name.strip())
        note = f"✅ {both(f'Ended {ended} sign-in(s) of {user}', f'已结束 {user} 的 {ended} 个登录')}"
        return note, *self._values(request)


def build_sign_ins_section(engine: Engine, tab: gr.Tab) -> None:
    """Lay out the section in the current column and fill it whenever ``tab`` is opened."""
    h = SignInHandlers(engine)
    gr.Markdown(t("signins.heading"))
    gr.Markdown(t("signins.intro"))
    table = gr.Dataframe(value=_frame([]), interactive=False, elem_id="sign-ins", label=t("signins.table"))
    with gr.Row():
        picked = gr.Dropdown(
            choices=[], allow_custom_value=True, label=t("signins.pick"), elem_id="pick-sign-in", scale=3
        )
        end = gr.Button(t("signins.end"), variant="stop", elem_id="end-sign-in", scale=1)
    with gr.Row():
        user = gr.Dropdown(
            choices=[], allow_custom_value=True, label=t("signins.user"), elem_id="sign-ins-user", scale=3
        )
        end_all = gr.Button(t("signins.end_all"), variant="stop", elem_id="end-user-sign-ins", scale=1)
    refresh = gr.Button(t("signins.refresh"), size="sm", elem_id="refresh-sign-ins")
    report = gr.Markdown(elem_id="sign-ins-report")
    shown = [table, picked, user]
    tab.select(h.load, outputs=shown, api_visibility="private")
    refresh.click(h.load, outputs=shown, api_visibility="private")
    end.click(h.end, inputs=[picked], outputs=[report, *shown], api_name="end_sign_in")
    end_all.click(h.end_all, inputs=[user], outputs=[report, *shown], api_name="end_user_sign_ins")
