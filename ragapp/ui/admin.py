"""The Admin tab: users (add, change role, reset password, remove), who may read and edit each knowledge base,
the browsers signed in (``ragapp.ui.admin_sessions``), the settings the app runs with (secrets masked), and the
audit log (``ragapp.ui.admin_audit``).

Shown to admins only. With accounts on, the page starts with the tab hidden and empty (nothing about users or
settings is in the page a reader gets); the load event shows and fills it for an admin. With accounts off the
one local user is an admin: the tab shows the settings and says how to turn accounts on. Every handler acts as
``actor_of(request)`` and the engine checks the role, so a reader calling these endpoints through Gradio's API
is refused like on the page.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from ragapp.core.access import Action, Actor, may
from ragapp.core.errors import AccessDenied
from ragapp.engine.engine import Engine
from ragapp.ui.admin_audit import build_audit_section
from ragapp.ui.admin_sessions import build_sign_ins_section
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import ROLE_WORDS, both, t
from ragapp.ui.markup import code_span, escape_text
from ragapp.ui.state import actor_of

# English names: the page renames them in Chinese (ragapp.ui.page_language.HEADERS).
USER_HEADERS = ["Name", "Role", "Groups", "Signs in with", "Added (UTC)"]
# How a user signs in (``UserView.source``), in both languages: the company sign-ins set role and groups again
# at every sign-in, so an edit here lasts until then.
SOURCE_WORDS = {"local": ("password", "密码"), "oidc": ("OpenID Connect", "OpenID Connect"), "ldap": ("LDAP", "LDAP")}
USER_TYPES = ["str", "html", "str", "html", "str"]  # the role and how one signs in, in both languages
KB_HEADERS = ["Knowledge base", "Readers", "Editors"]
KB_TYPES = ["str", "html", "str"]  # "open to everyone" in both languages
ROLE_CHOICES = [(t("role.reader"), "reader"), (t("role.editor"), "editor"), (t("role.admin"), "admin")]
OPEN = both("(open to everyone signed in)", "（所有登录用户可读）")

INTRO = t("admin.intro")
ACCOUNTS_OFF_NOTE = t("admin.accounts_off")


def _frame(rows: list[list[Any]], headers: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=headers)


def _ok(english: str, chinese: str) -> str:
    """A change done, said in the page's language (names escaped: they are the users')."""
    return f"✅ {both(escape_text(english), escape_text(chinese))}"


class AdminHandlers:
    """What each Admin-tab event does: engine calls as the signed-in user, results as component values."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _actor(self, request: gr.Request | None) -> Actor:
        return actor_of(self.engine, request)

    # -- values ---------------------------------------------------------------------------------

    def users_table(self, actor: Actor) -> pd.DataFrame:
        rows = [
            [
                u.name,
                both(*ROLE_WORDS.get(u.role, (u.role, u.role))),
                ", ".join(u.groups),
                both(*SOURCE_WORDS.get(u.source, (u.source, u.source))),
                u.created,
            ]
            for u in self.engine.admin.users(actor=actor)
        ]
        return _frame(rows, USER_HEADERS)

    def user_choices(self, actor: Actor, value: str | None = None) -> Any:
        choices = [u.name for u in self.engine.admin.users(actor=actor)]
        return gr.update(choices=choices, value=value if value in choices else None)

    def kb_table(self, actor: Actor) -> pd.DataFrame:
        rows = [
            [v.kb, escape_text(", ".join(v.readers)) or (OPEN if not v.has_rule else "-"), ", ".join(v.editors) or "-"]
            for v in self.engine.admin.kb_access(actor=actor)
        ]
        return _frame(rows, KB_HEADERS)

    def kb_choices(self, actor: Actor, value: str | None = None) -> Any:
        choices = [v.kb for v in self.engine.admin.kb_access(actor=actor)]
        return gr.update(choices=choices, value=value if value in choices else None)

    # -- events ---------------------------------------------------------------------------------

    @user_errors
    def load(self, request: gr.Request | None = None) -> tuple[Any, ...]:
        """On page load (and when the tab is opened): the tab shown and filled for an admin, hidden and empty
        for everyone else."""
        try:
            actor = self._actor(request)
        except AccessDenied:  # removed since signing in
            actor = None
        shown = actor is not None and (may(actor, Action.MANAGE_USERS) or may(actor, Action.VIEW_SETTINGS))
        if actor is None or not shown:
            empty_users, empty_kbs = _frame([], USER_HEADERS), _frame([], KB_HEADERS)
            hidden = gr.update(choices=[], value=None)
            return gr.update(visible=False), "", empty_users, hidden, empty_kbs, hidden, None
        settings = self.engine.admin.settings_view(actor=actor) if may(actor, Action.VIEW_SETTINGS) else None
        if not self.engine.admin.accounts_on or not may(actor, Action.MANAGE_USERS):
            note = ACCOUNTS_OFF_NOTE if not self.engine.admin.accounts_on else ""
            nothing = gr.update(choices=[], value=None)
            return (gr.update(visible=True), note, _frame([], USER_HEADERS), nothing, _frame([], KB_HEADERS),
                    nothing, settings)  # fmt: skip
        return (
            gr.update(visible=True),
            INTRO,
            self.users_table(actor),
            self.user_choices(actor),
            self.kb_table(actor),
            self.kb_choices(actor),
            settings,
        )

    def agent_tools(self, request: gr.Request | None = None) -> str:
        """The MCP servers Agent mode may use, each with its tools or why it has none (for who may see settings)."""
        try:
            actor = self._actor(request)
        except AccessDenied:
            return ""
        if not may(actor, Action.VIEW_SETTINGS):
            return ""
        listed = self.engine.admin.agent_tools()
        if not listed:
            return both(
                "None configured (`RAGAPP_AGENT__MCP_SERVERS`, see docs/mcp.md).",
                "未配置（`RAGAPP_AGENT__MCP_SERVERS`，见 docs/mcp.md）。",
            )
        lines = []
        for server in listed:
            name = f"**{escape_text(server.server)}**"
            if server.error is not None:
                lines.append(f"- {name}: ⚠️ {both('not reached', '无法连接')} ({escape_text(server.error)})")
            else:
                lines.append(f"- {name}: " + (", ".join(code_span(tool) for tool in server.tools) or "—"))
        return "\n".join(lines)

    @user_errors
    def add_user(
        self, name: str, password: str, role: str, groups: str, request: gr.Request | None = None
    ) -> tuple[Any, ...]:
        actor = self._actor(request)
        user = self.engine.admin.add_user(name or "", password or "", role or "reader", groups or "", actor=actor)
        en, zh = ROLE_WORDS.get(user.role, (user.role, user.role))
        note = _ok(f"Added {user.name} ({en.lower()})", f"已添加用户 {user.name}（{zh}）")
        return note, self.users_table(actor), self.user_choices(actor, user.name), "", "", ""

    @user_errors
    def set_role(self, name: str, role: str, request: gr.Request | None = None) -> tuple[Any, ...]:
        actor = self._actor(request)
        self.engine.admin.set_role(name or "", role or "", actor=actor)
        en, zh = ROLE_WORDS.get(role, (role, role))
        return _ok(f"{name} is now {en.lower()}", f"{name} 的角色已改为{zh}"), self.users_table(actor)

    @user_errors
    def role_of(self, name: str | None, request: gr.Request | None = None) -> Any:
        """The picked user's role, to change."""
        for user in self.engine.admin.users(actor=self._actor(request)) if name else []:
            if user.name == name:
                return gr.update(value=user.role)
        return gr.update()

    @user_errors
    def reset_password(self, name: str, password: str, request: gr.Request | None = None) -> tuple[str, str]:
        actor = self._actor(request)
        self.engine.admin.set_password(name or "", password or "", actor=actor)
        return _ok(f"Changed the password of {name}", f"已重置 {name} 的密码"), ""

    @user_errors
    def remove_user(self, name: str, request: gr.Request | None = None) -> tuple[Any, ...]:
        actor = self._actor(request)
        self.engine.admin.remove_user(name or "", actor=actor)
        return _ok(f"Removed {name}", f"已删除用户 {name}"), self.users_table(actor), self.user_choices(actor)

    @user_errors
    def kb_rule(self, kb: str | None, request: gr.Request | None = None) -> tuple[str, str]:
        """The picked base's readers and editors, to edit."""
        if not kb:
            return "", ""
        for view in self.engine.admin.kb_access(actor=self._actor(request)):
            if view.kb == kb:
                return ", ".join(view.readers), ", ".join(view.editors)
        return "", ""

    @user_errors
    def set_kb_access(self, kb: str, readers: str, editors: str, request: gr.Request | None = None) -> tuple[Any, ...]:
        actor = self._actor(request)
        view = self.engine.admin.set_kb_access(kb or "", readers or "", editors or "", actor=actor)
        readers, editors = ", ".join(view.readers) or "-", ", ".join(view.editors) or "-"
        note = (
            _ok(
                f"{view.kb}: readers {readers}, editors {editors} (and admins)",
                f"{view.kb}：可读 {readers}，可编辑 {editors}（以及管理员）",
            )
            if view.has_rule
            else _ok(f"{view.kb} is open to every signed-in user", f"{view.kb} 已对所有登录用户开放")
        )
        return note, self.kb_table(actor), self.kb_choices(actor, view.kb)


@dataclass(frozen=True)
class AdminTab:
    """The built tab, and what layout.py wires to the page's load event (``demo.load(t.load, outputs=t.outputs)``)."""

    tab: gr.Tab
    load: Callable[..., tuple[Any, ...]]
    outputs: list[Any]


def build_admin_tab(engine: Engine, handlers: AdminHandlers | None = None) -> AdminTab:
    """Lay out the Admin tab inside the current ``gr.Tabs`` and wire its events."""
    h = handlers or AdminHandlers(engine)
    accounts_on = engine.accounts is not None
    with gr.Tab(t("admin.tab"), id="admin", visible=not accounts_on, elem_id="admin-tab") as tab:
        note = gr.Markdown(elem_id="admin-note")
        report = gr.Markdown(elem_id="admin-report")
        with gr.Column(visible=accounts_on, elem_id="admin-users"):
            gr.Markdown(t("admin.users_heading"))
            users = gr.Dataframe(
                value=_frame([], USER_HEADERS),
                interactive=False,
                elem_id="users-table",
                label=t("admin.users"),
                datatype=USER_TYPES,  # type: ignore[arg-type]
            )
            with gr.Accordion(t("admin.add_user"), open=True):
                with gr.Row():
                    new_name = gr.Textbox(label=t("admin.name"), elem_id="new-user-name", scale=2)
                    new_password = gr.Textbox(
                        label=t("admin.password"),
                        type="password",
                        info=t("admin.password_info"),
                        elem_id="new-user-password",
                        scale=2,
                    )
                    new_role = gr.Dropdown(
                        choices=ROLE_CHOICES, value="reader", label=t("admin.role"), elem_id="new-user-role", scale=1
                    )
                    new_groups = gr.Textbox(
                        label=t("admin.groups"), placeholder="hr, finance", elem_id="new-user-groups", scale=2
                    )
                add = gr.Button(t("admin.add_user"), variant="primary", elem_id="add-user")
            with gr.Accordion(t("admin.change_user"), open=True):
                picked = gr.Dropdown(
                    choices=[],
                    allow_custom_value=True,  # the page starts with no names; the engine checks the name instead
                    label=t("admin.user"),
                    elem_id="pick-user",
                )
                with gr.Row():
                    role = gr.Dropdown(choices=ROLE_CHOICES, value="reader", label=t("admin.role"), elem_id="user-role")
                    set_role = gr.Button(t("admin.set_role"), elem_id="set-role")
                with gr.Row():
                    password = gr.Textbox(
                        label=t("admin.new_password"), type="password", elem_id="reset-password-value"
                    )
                    reset = gr.Button(t("admin.reset"), elem_id="reset-password")
                remove = gr.Button(t("admin.remove"), variant="stop", elem_id="remove-user")
            gr.Markdown(t("admin.kb_heading"))
            kbs = gr.Dataframe(
                value=_frame([], KB_HEADERS),
                interactive=False,
                elem_id="kb-access",
                label=t("admin.kb_table"),
                datatype=KB_TYPES,  # type: ignore[arg-type]
            )
            with gr.Row():
                kb = gr.Dropdown(choices=[], allow_custom_value=True, label=t("admin.kb"), elem_id="kb-access-pick")
                readers = gr.Textbox(
                    label=t("admin.readers"),
                    placeholder="alice, group:hr",
                    info=t("admin.readers_info"),
                    elem_id="kb-readers",
                )
                editors = gr.Textbox(label=t("admin.editors"), placeholder="carol", elem_id="kb-editors")
            save_kb = gr.Button(t("admin.save_kb"), elem_id="save-kb-access")
            build_sign_ins_section(engine, tab)  # every browser signed in, to sign out (ragapp.ui.admin_sessions)
        gr.Markdown(t("admin.settings_heading"))
        settings = gr.JSON(elem_id="settings-view", label=t("admin.settings"), open=True)
        gr.Markdown(t("admin.mcp_heading"))
        mcp = gr.Markdown(elem_id="agent-mcp-tools")
        build_audit_section(engine, tab)

    outputs = [tab, note, users, picked, kbs, kb, settings]
    tab.select(h.load, outputs=outputs, api_visibility="private")
    tab.select(h.agent_tools, outputs=[mcp], api_visibility="private")
    add.click(
        h.add_user,
        inputs=[new_name, new_password, new_role, new_groups],
        outputs=[report, users, picked, new_name, new_password, new_groups],
        api_name="add_user",
    )
    picked.change(h.role_of, inputs=[picked], outputs=[role], api_visibility="private")
    set_role.click(h.set_role, inputs=[picked, role], outputs=[report, users], api_name="set_user_role")
    reset.click(h.reset_password, inputs=[picked, password], outputs=[report, password], api_name="reset_password")
    remove.click(h.remove_user, inputs=[picked], outputs=[report, users, picked], api_name="remove_user")
    kb.change(h.kb_rule, inputs=[kb], outputs=[readers, editors], api_visibility="private")
    save_kb.click(h.set_kb_access, inputs=[kb, readers, editors], outputs=[report, kbs, kb], api_name="set_kb_access")
    return AdminTab(tab, h.load, outputs)
