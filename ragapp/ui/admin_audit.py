"""The Admin tab's audit log: filter by user, action, target (a knowledge base, document, user, source or
intent), outcome and dates; the newest matches in a table; "Download CSV" for every match.

Hidden and empty until an admin opens the tab (``Action.READ_AUDIT``): a reader's page holds nothing of the log,
and a reader calling these endpoints through Gradio's API is refused by the engine. Each look at the log is
itself recorded, with its filters.
"""

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from ragapp.core.access import Action, may
from ragapp.core.errors import AccessDenied, RagAppError
from ragapp.engine.audit import AuditAction, AuditQuery, AuditRecord
from ragapp.engine.engine import Engine
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.markup import escape_text
from ragapp.ui.state import actor_of

# English names: the page renames them in Chinese (ragapp.ui.page_language.HEADERS).
HEADERS = ["Time (UTC)", "User", "Role", "Client", "Action", "Target", "Outcome", "Detail"]
TYPES = ["str", "str", "str", "str", "html", "str", "html", "str"]  # action and outcome in both languages
SHOWN = 500  # rows in the table; the CSV has every match
ALL = "all"

ACTION_WORDS: dict[str, str] = {
    AuditAction.SIGN_IN: "登录",
    AuditAction.SIGN_OUT: "退出登录",
    AuditAction.SIGN_IN_END: "结束登录会话",
    AuditAction.SEARCH: "检索",
    AuditAction.UPLOAD: "上传",
    AuditAction.REINDEX: "重新索引",
    AuditAction.DELETE: "删除文档",
    AuditAction.MOVE: "移动文档",
    AuditAction.TAG: "标签",
    AuditAction.SOURCE_ADD: "添加同步源",
    AuditAction.SOURCE_REMOVE: "移除同步源",
    AuditAction.SOURCE_SYNC: "同步",
    AuditAction.SOURCE_PAUSE: "暂停同步",
    AuditAction.SOURCE_RESUME: "恢复同步",
    AuditAction.ENRICH_PAUSE: "暂停后台索引",
    AuditAction.ENRICH_RESUME: "恢复后台索引",
    AuditAction.KB_RULE: "知识库权限",
    AuditAction.USER_ADD: "添加用户",
    AuditAction.USER_ROLE: "更改角色",
    AuditAction.USER_PASSWORD: "重置密码",
    AuditAction.USER_REMOVE: "删除用户",
    AuditAction.KEY_CREATE: "创建 API 密钥",
    AuditAction.KEY_REVOKE: "吊销 API 密钥",
    AuditAction.INTENT_SAVE: "保存意图",
    AuditAction.INTENT_DELETE: "删除意图",
    AuditAction.INTENT_MOVE: "移动意图",
    AuditAction.INTENT_IMPORT: "导入意图树",
    AuditAction.AUDIT_READ: "查看审计日志",
}
OUTCOME_WORDS = {"ok": ("ok", "成功"), "refused": ("refused", "已拒绝"), "failed": ("failed", "失败")}
ACTION_CHOICES = [(t("audit.all"), ALL)] + [(f"{a.value} · {ACTION_WORDS[a]}", a.value) for a in AuditAction]
OUTCOME_CHOICES = [(t("audit.all"), ALL)] + [(f"{en} · {zh}", key) for key, (en, zh) in OUTCOME_WORDS.items()]
BAD_DATE = (
    "Write dates as 2026-12-01, or 2026-12-01 09:30 (UTC): {value!r} is not one.",
    "日期请写成 2026-12-01 或 2026-12-01 09:30（UTC）：{value!r} 不是有效日期。",
)


def _when(value: str | None) -> datetime | None:
    text = (value or "").strip()
    if not text:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise gr.Error(both(*(escape_text(s.format(value=text)) for s in BAD_DATE))) from None


def query_of(user: str, action: str, target: str, outcome: str, since: str, until: str) -> AuditQuery:
    """The filters as the engine takes them ("all" and blanks match everything)."""
    return AuditQuery(
        actor=(user or "").strip(), action="" if action in (None, ALL) else action, target=(target or "").strip(),
        outcome="" if outcome in (None, ALL) else outcome, since=_when(since), until=_when(until), limit=SHOWN,
    )  # fmt: skip


def _row(r: AuditRecord) -> list[Any]:
    action = both(escape_text(r.action), ACTION_WORDS.get(r.action, escape_text(r.action)))
    outcome = both(*OUTCOME_WORDS.get(r.outcome, (escape_text(r.outcome),) * 2))
    detail = ", ".join(f"{k}: {v}" for k, v in sorted(r.detail.items()))
    return [r.at[:19].replace("T", " "), r.actor, r.role, r.client, action, r.target, outcome, detail]


def _frame(rows: list[list[Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=HEADERS)


class AuditHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def load(self, request: gr.Request | None = None) -> tuple[Any, Any, str]:
        """When the Admin tab opens: the section shown with the newest records for an admin, hidden for others."""
        try:
            actor = actor_of(self.engine, request)
        except AccessDenied:
            actor = None
        if actor is None or not may(actor, Action.READ_AUDIT):
            return gr.update(visible=False), _frame([]), ""
        return (gr.update(visible=True), *self.search("", ALL, "", ALL, "", "", request))

    @user_errors
    def search(
        self, user: str, action: str, target: str, outcome: str, since: str, until: str,
        request: gr.Request | None = None,
    ) -> tuple[pd.DataFrame, str]:  # fmt: skip
        """The newest records the filters match, and how many match in all."""
        page = self.engine.audit.page(
            query_of(user, action, target, outcome, since, until), actor=actor_of(self.engine, request)
        )
        if not self.engine.audit.enabled:
            said = both(
                "The audit log is off (`RAGAPP_AUDIT__ENABLED`).", "审计日志已关闭（`RAGAPP_AUDIT__ENABLED`）。"
            )
        elif page.total > len(page.records):
            said = both(
                f"The newest {len(page.records):,} of {page.total:,} matching records: narrow the filters, or "
                "download the CSV for all of them.",
                f"显示最新的 {len(page.records):,} 条（共 {page.total:,} 条符合）："
                "请缩小筛选范围，或下载 CSV 查看全部。",
            )
        else:
            said = both(f"{page.total:,} matching record(s).", f"共 {page.total:,} 条符合的记录。")
        days = self.engine.settings.audit.retention_days
        kept = (
            ""
            if not self.engine.audit.enabled
            else both(f" Records are kept {days:,} days.", f"记录保留 {days:,} 天。")
            if days
            else both(" Records are kept forever.", "记录永久保留。")
        )
        return _frame([_row(r) for r in page.records]), said + kept

    @user_errors
    def download(
        self, user: str, action: str, target: str, outcome: str, since: str, until: str,
        request: gr.Request | None = None,
    ) -> str:  # fmt: skip
        """Every record the filters match, as a CSV file to download."""
        text = self.engine.audit.csv(
            query_of(user, action, target, outcome, since, until), actor=actor_of(self.engine, request)
        )
        folder = Path(tempfile.mkdtemp(prefix="ragapp-audit-"))
        path = folder / f"audit-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}.csv"
        try:
            path.write_text(text, "utf-8")
        except OSError as exc:
            raise RagAppError(f"The CSV file could not be written ({exc}).") from None
        return str(path)


@dataclass(frozen=True)
class AuditSection:
    column: gr.Column
    table: gr.Dataframe


def build_audit_section(engine: Engine, tab: gr.Tab) -> AuditSection:
    """Lay out the audit log inside the Admin tab being built, filled when ``tab`` is opened."""
    h = AuditHandlers(engine)
    with gr.Column(visible=False, elem_id="admin-audit") as column:
        gr.Markdown(t("audit.heading"))
        with gr.Row():
            user = gr.Textbox(label=t("audit.user"), elem_id="audit-user", scale=1)
            action = gr.Dropdown(ACTION_CHOICES, value=ALL, label=t("audit.action"), elem_id="audit-action", scale=1)
            target = gr.Textbox(label=t("audit.target"), info=t("audit.target_info"), elem_id="audit-target", scale=2)
            outcome = gr.Dropdown(
                OUTCOME_CHOICES, value=ALL, label=t("audit.outcome"), elem_id="audit-outcome", scale=1
            )
        with gr.Row():
            since = gr.Textbox(label=t("audit.since"), placeholder="2026-12-01", elem_id="audit-since", scale=1)
            until = gr.Textbox(label=t("audit.until"), placeholder="2026-12-31 18:00", elem_id="audit-until", scale=1)
            show = gr.Button(t("audit.show"), variant="primary", elem_id="audit-show", scale=1)
            download = gr.Button(t("audit.download"), elem_id="audit-download", scale=1)
        said = gr.Markdown(elem_id="audit-count")
        table = gr.Dataframe(
            value=_frame([]), interactive=False, elem_id="audit-table", datatype=TYPES,  # type: ignore[arg-type]
            label=t("audit.table"),
        )  # fmt: skip
        exported = gr.File(label=t("audit.csv"), interactive=False, elem_id="audit-csv")
    filters = [user, action, target, outcome, since, until]
    tab.select(h.load, outputs=[column, table, said], api_visibility="private")
    show.click(h.search, inputs=filters, outputs=[table, said], api_name="audit_log")
    for trigger in (user.submit, target.submit, since.submit, until.submit):
        trigger(h.search, inputs=filters, outputs=[table, said], api_visibility="private")
    show.click(lambda: None, outputs=[exported], api_visibility="private")  # an old download goes with new filters
    download.click(h.download, inputs=filters, outputs=[exported], api_name="audit_csv")
    return AuditSection(column, table)
