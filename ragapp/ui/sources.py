"""The Knowledge tab's panel of followed folders, git repositories and websites: each source with its state (and
a running sync's progress) and last report; sync now, pause and resume for editors; adding one for admins.
The table refreshes every few seconds while the page is open, so a long first sync shows how far it got."""

from dataclasses import dataclass
from typing import Any

import gradio as gr

from ragapp.core.access import LOCAL_ACTOR, Action, Actor, may
from ragapp.core.errors import AccessDenied
from ragapp.engine.engine import Engine
from ragapp.engine.sync import SourceStatus, SyncReport
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.markup import escape_text
from ragapp.ui.said_words import said_text
from ragapp.ui.state import actor_of

SOURCE_HEADERS = ["Source", "Kind", "Location", "Knowledge base", "State", "Last sync (UTC)", "Last report"]
REFRESH_S = 3.0
SHOWN = 15  # paths listed per kind of change in a report; the rest are counted


@dataclass(frozen=True)
class SourcesPanel:
    column: gr.Column  # shown to those who may change documents (the load event)
    table: gr.Dataframe
    pick: gr.Dropdown
    sync_now: gr.Button
    pause: gr.Button
    resume: gr.Button
    report: gr.Markdown
    adding: gr.Column  # admins only
    name: gr.Textbox
    kind: gr.Radio
    location: gr.Textbox
    kb: gr.Textbox
    include: gr.Textbox
    exclude: gr.Textbox
    branch: gr.Textbox
    add: gr.Button
    timer: gr.Timer


def build_sources_panel() -> SourcesPanel:
    with gr.Accordion(t("sync.title"), open=False, elem_id="sources"), gr.Column(visible=False) as column:
        gr.Markdown(t("sync.hint"))
        table = gr.Dataframe(headers=SOURCE_HEADERS, interactive=False, wrap=True, elem_id="sources-table",
                             label=t("sync.sources"))  # fmt: skip
        with gr.Row():
            pick = gr.Dropdown(choices=[], label=t("sync.pick"), elem_id="source-pick", scale=3)
            sync_now = gr.Button(t("sync.now"), size="sm", elem_id="source-sync", scale=1)
            pause = gr.Button(t("sync.pause"), size="sm", elem_id="source-pause", scale=1)
            resume = gr.Button(t("sync.resume"), size="sm", elem_id="source-resume", scale=1)
        report = gr.Markdown(elem_id="source-report")
        with gr.Column(visible=False, elem_id="source-adding") as adding:
            gr.Markdown(t("sync.add_title"))
            with gr.Row():
                name = gr.Textbox(label=t("sync.name"), elem_id="source-name")
                kinds = [(t("sync.kind_folder"), "folder"), (t("sync.kind_git"), "git"), (t("sync.kind_web"), "web")]
                kind = gr.Radio(choices=kinds, value="folder", label=t("sync.kind"), elem_id="source-kind")
                kb = gr.Textbox(label=t("kb.choice"), elem_id="source-kb")
            location = gr.Textbox(label=t("sync.location"), info=t("sync.location_info"), elem_id="source-location")
            with gr.Row():
                include = gr.Textbox(label=t("sync.include"), placeholder="*.md, docs/*", elem_id="source-include")
                exclude = gr.Textbox(label=t("sync.exclude"), placeholder="drafts/*", elem_id="source-exclude")
                branch = gr.Textbox(label=t("sync.branch"), elem_id="source-branch")
            add = gr.Button(t("sync.add"), variant="primary", elem_id="source-add")
    timer = gr.Timer(REFRESH_S, active=False)  # started on load for those who see the panel
    return SourcesPanel(column, table, pick, sync_now, pause, resume, report, adding, name, kind, location, kb,
                        include, exclude, branch, add, timer)  # fmt: skip


class SourceHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _actor(self, request: gr.Request | None) -> Actor:
        if request is None:
            return LOCAL_ACTOR
        try:
            return actor_of(self.engine, request)
        except AccessDenied:
            return Actor("?", "reader", frozenset({"(nobody)"}))

    def _statuses(self, actor: Actor) -> list[SourceStatus]:
        if self.engine.sync is None or not may(actor, Action.UPLOAD):
            return []
        return self.engine.sync.sources(actor=actor)

    def shown(self, request: gr.Request | None = None) -> tuple[Any, Any, Any]:
        """On page load: the panel (and its refreshing) for those who may change documents, the form to add a
        source for admins."""
        actor = self._actor(request)
        editor = may(actor, Action.UPLOAD)
        return gr.update(visible=editor), gr.update(visible=may(actor, Action.MANAGE_SOURCES)), gr.Timer(active=editor)

    def table(self, request: gr.Request | None = None) -> list[list[Any]]:
        return [row(s) for s in self._statuses(self._actor(request))]

    def refresh(self, picked: str | None, request: gr.Request | None = None) -> tuple[Any, Any, str]:
        """The table, the choices and the picked source's report, as they are now."""
        statuses = self._statuses(self._actor(request))
        names = [s.source.name for s in statuses]
        kept = picked if picked in names else (names[0] if names else None)
        chosen = next((s for s in statuses if s.source.name == kept), None)
        return [row(s) for s in statuses], gr.update(choices=names, value=kept), report_markdown(chosen)

    @user_errors
    def act(self, what: str, name: str | None, request: gr.Request | None = None) -> None:
        """``what`` (sync, pause or resume) to source ``name``; a toast says what happened."""
        if not name:
            raise gr.Error(both("Pick a source first.", "请先选择一个同步源。"))
        sync, actor, shown = self.engine.sync, self._actor(request), escape_text(name)
        if sync is None:
            return
        if what == "sync":
            sync.sync_now(name, actor=actor)
            gr.Info(both(f"Syncing {shown}…", f"正在同步 {shown}…"))
        elif what == "pause":
            sync.pause(name, actor=actor)
            gr.Info(both(f"{shown} paused.", f"{shown} 已暂停。"))
        else:
            sync.resume(name, actor=actor)
            gr.Info(both(f"{shown} resumed; syncing now.", f"{shown} 已恢复，正在同步。"))

    @user_errors
    def add(
        self, name: str, kind: str, location: str, kb: str, include: str, exclude: str, branch: str,
        request: gr.Request | None = None,
    ) -> tuple[str, Any]:  # fmt: skip
        """Follow a new source (its first sync starts at once); the message and the picked source."""
        if self.engine.sync is None:
            return "", gr.update()
        source = self.engine.sync.add(
            name, kind, location, kb, _patterns(include), _patterns(exclude), None, branch, actor=self._actor(request)
        )
        said = both(
            f"Following {escape_text(source.location)} into '{escape_text(source.kb)}'; the first sync has started.",
            f"已开始跟随 {escape_text(source.location)}，存入“{escape_text(source.kb)}”；首次同步已开始。",
        )
        return said, gr.update(choices=[source.name], value=source.name)


def _patterns(text: str) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def row(s: SourceStatus) -> list[Any]:
    state = s.state + (f" {s.done}/{s.total}" if s.state == "running" and s.total else "")
    summary = s.report.summary() if s.report else "never synced"
    return [s.source.name, s.source.kind, s.source.location, s.source.kb, state, s.last_run_at, summary]


def report_markdown(s: SourceStatus | None) -> str:
    """A source's last report: the counts, then each kind of change with its paths, refusals with reasons."""
    if s is None:
        return ""
    report: SyncReport | None = s.report
    name = escape_text(s.source.name)
    if report is None:
        return both(f"**{name}**: not synced yet.", f"**{name}**：尚未同步。")
    if report.error:
        failed = both(f"**{name}**: the last sync failed: ", f"**{name}**：上次同步失败：")
        return failed + _said(report.error_said, report.error)
    lines = [
        f"**{name}** · {escape_text(report.finished_at)} UTC"
        + (f" · {escape_text(report.commit[:12])}" if report.commit else ""),
        _site_counts(report)
        if s.source.kind == "web"
        else both(
            f"{report.seen} files: {len(report.added)} added, {len(report.updated)} updated, "
            f"{len(report.renamed)} renamed, {len(report.removed)} removed, {len(report.refused)} refused, "
            f"{report.unchanged} unchanged; {report.hashed} read, {report.ingested} ingested.",
            f"{report.seen} 个文件：新增 {len(report.added)}，更新 {len(report.updated)}，"
            f"重命名 {len(report.renamed)}，删除 {len(report.removed)}，"
            f"拒收 {len(report.refused)}，未变 {report.unchanged}；"
            f"读取 {report.hashed}，编入 {report.ingested}。",
        ),
    ]
    if report.stopped:
        lines.append(both("Stopped early: ", "提前停止：") + _said(report.stopped_said, report.stopped))
    sections = [
        (both("Added", "新增"), report.added), (both("Updated", "更新"), report.updated),
        (both("Renamed", "重命名"), [f"{a} → {b}" for a, b in report.renamed]),
        (both("Removed", "删除"), report.removed),
        (both("Retrying (still being written)", "稍后重试（仍在写入）"), report.retrying),
    ]  # fmt: skip
    refused = [_said(r.said, f"{r.path}: {r.reason}") for r in report.refused]
    escaped = [(title, [escape_text(item) for item in items]) for title, items in sections]
    for title, items in [*escaped, (both("Refused", "拒收"), refused)]:
        if items:
            lines.append(f"{title}:")
            lines += [f"- {item}" for item in items[:SHOWN]]
            if len(items) > SHOWN:
                lines.append(both(f"- … and {len(items) - SHOWN} more", f"- …… 另有 {len(items) - SHOWN} 项"))
    return "\n\n".join(lines[:2]) + "\n\n" + "\n".join(lines[2:])


def _said(said: Any, english: str) -> str:
    """An engine's record in both languages, where the catalogue has its words; else its English, escaped."""
    return (said_text(said, escape_text) if said is not None else None) or escape_text(english)


def _site_counts(report: SyncReport) -> str:
    """A website crawl's counts: pages, what became of them, and the requests it took."""
    changed = len(report.added) + len(report.updated)
    return both(
        f"{report.seen} pages: {len(report.added)} added, {len(report.updated)} updated, {len(report.removed)} "
        f"removed, {len(report.refused)} refused, {report.unchanged} unchanged; {report.requests} requests, "
        f"{report.downloaded / 1e6:.1f} MB, {changed} read again.",
        f"{report.seen} 个网页：新增 {len(report.added)}，更新 {len(report.updated)}，删除 {len(report.removed)}，"
        f"拒收 {len(report.refused)}，未变 {report.unchanged}；请求 {report.requests} 次，"
        f"{report.downloaded / 1e6:.1f} MB，重新读取 {changed}。",
    )


def wire_sources(engine: Engine, panel: SourcesPanel) -> SourceHandlers:
    handlers = SourceHandlers(engine)
    shown = [panel.table, panel.pick, panel.report]
    panel.timer.tick(handlers.refresh, inputs=[panel.pick], outputs=shown, show_progress="hidden")
    panel.pick.change(handlers.refresh, inputs=[panel.pick], outputs=shown, show_progress="hidden")
    for button, what in ((panel.sync_now, "sync"), (panel.pause, "pause"), (panel.resume, "resume")):
        button.click(_acting(handlers, what), inputs=[panel.pick]).then(
            handlers.refresh, inputs=[panel.pick], outputs=shown
        )
    form = [panel.name, panel.kind, panel.location, panel.kb, panel.include, panel.exclude, panel.branch]
    panel.add.click(handlers.add, inputs=form, outputs=[panel.report, panel.pick]).then(
        handlers.refresh, inputs=[panel.pick], outputs=shown
    )
    return handlers


def _acting(handlers: SourceHandlers, what: str) -> Any:
    # A plain function: Gradio finds the gr.Request parameter by its annotation (not through a lambda or partial).
    def act(name: str | None, request: gr.Request) -> None:
        handlers.act(what, name, request)

    return act
