"""The Traces tab: the user's recent requests, and for one of them everything that happened inside.

``TraceHandlers`` turns engine calls into component values (tested without a browser); ``build_traces_tab``
lays the tab out. Traces belong to the user who made them: every handler takes the owner id kept in the
browser (or the login name), and the engine only ever returns that owner's traces and test cases.
"""

import json
import tempfile
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from ragapp.core.access import Action, may
from ragapp.core.errors import AccessDenied
from ragapp.engine import Trace
from ragapp.engine.engine import Engine
from ragapp.ui import trace_views as views
from ragapp.ui.experience_views import experience_lines, experience_table
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.state import actor_of, owner_of
from ragapp.ui.testcases import build_eval_panel, build_save_case
from ragapp.ui.trace_budget import budget_markdown
from ragapp.ui.trace_charts import waterfall

STATUS_FILTER = [(t("status.all"), "all"), (t("status.ok"), "ok"), (t("status.refused"), "refused"),
                 (t("status.not found"), "not found"), (t("status.degraded"), "degraded"),
                 (t("status.failed"), "failed"), (t("status.clarified"), "clarified"),
                 (t("status.cancelled"), "cancelled")]  # fmt: skip
MODE_FILTER = ["all", "workflow", "agent", "auto", "ingest"]
FEEDBACK_FILTER = [(t("traces.all"), "all"), (t("traces.down"), "down"), (t("traces.up"), "up"),
                   (t("traces.any"), "any"), (t("traces.none"), "none")]  # fmt: skip
CHANNEL_HEADERS = ["Channel", "Rank", "Score", "Document", "Chunk id"]
INTENT_HEADERS = ["Question", "Intent", "Score", "Action", "Reason"]  # ✓ marks the chosen intents
AGENT_HEADERS = ["Step", "Tool", "Arguments", "Status", "Seconds", "Result"]
AGENT_TYPES = ["number", "str", "str", "html", "number", "str"]  # the status in both languages


class TraceHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def doc_names(self, request: gr.Request | None = None) -> dict[str, str]:
        """Document id -> name, of the documents the user may read (the why-not picker names no other)."""
        try:
            actor = actor_of(self.engine, request)
        except AccessDenied:
            return {}
        return {d.doc_id: d.name for d in self.engine.library.documents(actor=actor)}

    @user_errors
    def recent(
        self,
        stored: str | None,
        text: str = "",
        status: str = "all",
        mode: str = "all",
        rating: str = "all",
        everyone: bool = False,
        request: gr.Request | None = None,
    ) -> tuple[list[list[Any]], list[str]]:
        """The list of recent requests (newest first) and their ids, in the same order; ``everyone``: all
        users' (admins only, the engine checks)."""
        owner = owner_of(self.engine, stored, request)
        kind = "ingest" if mode == "ingest" else None
        items = self.engine.observability.traces(
            owner,
            actor=actor_of(self.engine, request),
            everyone=bool(everyone),
            text=(text or "").strip(),
            status=None if status in {"all", None} else status,
            mode=None if mode in {"all", "ingest", None} else mode,
            kind=kind,
            rating=None if rating in {"all", None} else rating,
        )
        return views.summary_rows(items), [t.id for t in items]

    @user_errors
    def open(
        self,
        evt: gr.SelectData,
        ids: list[str],
        stored: str | None,
        everyone: bool = False,
        request: gr.Request | None = None,
    ) -> tuple[Any, ...]:
        row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
        if not ids or row is None or row >= len(ids):
            raise gr.Error(both("Pick a request in the list first.", "请先在列表中选择一个请求。"))
        owner, actor = owner_of(self.engine, stored, request), actor_of(self.engine, request)
        trace = self.engine.observability.trace(ids[row], owner, actor=actor, everyone=bool(everyone))
        if trace is None:
            raise gr.Error(
                both(
                    "That trace is gone (traces are kept for a limited time). Refresh the list.",
                    "这条追踪记录已不在（追踪记录只保留一段时间），请刷新列表。",
                )
            )
        return self.show(trace, request)

    def everyone_box(self, request: gr.Request | None = None) -> Any:
        """On load: the "everyone's traces" box, for the roles that may read them."""
        try:
            shown = may(actor_of(self.engine, request), Action.ALL_TRACES)
        except AccessDenied:
            shown = False
        return gr.update(visible=shown)

    def show(self, trace: Trace, request: gr.Request | None = None) -> tuple[Any, ...]:
        """Every view of one trace: header (with the feedback given on it), waterfall, intents, searches, model
        calls, the prompt budget, agent steps, the why-not picker, the test-case form and the export file."""
        names = self.doc_names(request)
        searches = views.search_labels(trace)
        first = self.search_views(trace, 0, names)
        cited = [n for n in views.cited_documents(trace) if n in names.values()]
        return (
            trace,
            views.header(trace)
            + experience_lines(trace)
            + views.feedback_line(*self.engine.observability.feedback(trace.id)),
            waterfall(trace),
            _frame(views.intent_rows(trace), INTENT_HEADERS),
            gr.update(choices=searches, value=0 if searches else None, visible=len(searches) > 1),
            *first,
            views.llm_markdown(trace),
            budget_markdown(trace),
            _frame(views.agent_rows(trace), AGENT_HEADERS),
            gr.update(choices=sorted((n, d) for d, n in names.items()), value=None),
            gr.update(choices=sorted(set(names.values())), value=cited),
            self.export(trace),
            gr.update(visible=True),
        )

    def experience(self, request: gr.Request | None = None) -> str:
        """The table of what procedural memory has learned, for those who may read every trace."""
        try:
            return experience_table(self.engine.observability.experience(actor=actor_of(self.engine, request)))
        except AccessDenied:
            return both(
                "Only an admin sees what was learned from everyone's feedback.",
                "只有管理员能看到从所有人的反馈中学到的经验。",
            )

    def search_views(
        self, trace: Trace | None, index: int | None, names: dict[str, str] | None = None
    ) -> tuple[Any, Any, str]:
        """Channel hits, the fused table and a settings line for search ``index`` of the trace (``names``:
        document id -> name, read from the catalog when not given)."""
        if trace is None or not trace.retrievals:
            return (
                _frame([], CHANNEL_HEADERS),
                pd.DataFrame(),
                "_" + both("No search ran in this request.", "此请求没有检索。") + "_",
            )
        searches = trace.retrievals
        search = searches[min(int(index or 0), len(searches) - 1)]
        channels = _frame(views.channel_rows(search, names or self.doc_names()), CHANNEL_HEADERS)
        fused = _frame(views.fused_rows(search, views.prompt_ids(trace) or None), views.fused_headers(search))
        relevance = views.relevance_lines(search)
        gate = both("Relevance gate, per chunk", "相关性过滤（逐个片段）")
        note = views.search_note(search) + (f"\n\n**{gate}**\n{relevance}" if relevance else "")
        return channels, fused, note

    def why_not(self, trace: Trace | None, doc_id: str | None, request: gr.Request | None = None) -> str:
        if not trace:
            return both("Open a request first.", "请先打开一个请求。")
        if not doc_id:
            return both("Pick a document.", "请选择一份文档。")
        names = self.doc_names(request)
        if doc_id not in names:  # only a document the user may read is explained
            return both("Pick a document in the list.", "请在列表中选择一份文档。")
        return views.why_not(trace, doc_id, names[doc_id])

    @staticmethod
    def export(trace: Trace) -> str:
        """The trace as a JSON file to download, in the shape the store keeps."""
        folder = Path(tempfile.mkdtemp(prefix="ragapp-trace-"))
        path = folder / f"trace-{trace.id or 'unknown'}.json"
        path.write_text(json.dumps(trace.to_dict(), indent=2, ensure_ascii=False, default=str), "utf-8")
        return str(path)


def _frame(rows: list[list[Any]], headers: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=headers)


def build_traces_tab(engine: Engine, owner: gr.BrowserState) -> gr.Tab:
    h = TraceHandlers(engine)
    with gr.Tab(t("traces.tab"), id="traces") as tab:
        gr.Markdown(t("traces.intro"))
        with gr.Row():
            text = gr.Textbox(
                label=t("traces.filter"), placeholder=t("traces.filter_placeholder"), elem_id="trace-filter", scale=3
            )
            status = gr.Dropdown(STATUS_FILTER, value="all", label=t("traces.status"), elem_id="trace-status", scale=1)
            mode = gr.Dropdown(MODE_FILTER, value="all", label=t("traces.mode"), elem_id="trace-mode", scale=1)
            rating = gr.Dropdown(
                FEEDBACK_FILTER, value="all", label=t("traces.feedback"), elem_id="trace-feedback", scale=1
            )
            everyone = gr.Checkbox(
                label=t("traces.everyone"), value=False, visible=False, elem_id="trace-everyone", scale=1
            )
            refresh = gr.Button(t("traces.refresh"), elem_id="trace-refresh", scale=1)
        ids = gr.State([])
        listing = gr.Dataframe(
            headers=views.SUMMARY_HEADERS,
            interactive=False,
            elem_id="trace-list",
            datatype=views.SUMMARY_TYPES,  # type: ignore[arg-type]
            label=t("traces.recent"),
            max_height=320,
        )
        current = gr.State(None)
        with gr.Column(visible=False, elem_id="trace-detail") as detail:
            head = gr.Markdown(elem_id="trace-header")
            plot = gr.Plot(label=t("traces.waterfall"), elem_id="trace-waterfall")
            with gr.Accordion(t("traces.intents"), open=False):
                intents = gr.Dataframe(
                    headers=INTENT_HEADERS,
                    interactive=False,
                    elem_id="trace-intents",
                    datatype=views.INTENT_TYPES,  # type: ignore[arg-type]
                )
            search = gr.Dropdown(label=t("traces.search"), choices=[], elem_id="trace-search", visible=False)
            note = gr.Markdown(elem_id="trace-search-note")
            fused = gr.Dataframe(interactive=False, elem_id="trace-fused", label=t("traces.fused"), wrap=True)
            with gr.Accordion(t("traces.channels"), open=False):
                channels = gr.Dataframe(headers=CHANNEL_HEADERS, interactive=False, elem_id="trace-channels")
            with gr.Accordion(t("traces.calls"), open=False):
                calls = gr.Markdown(elem_id="trace-llm")
            with gr.Accordion(t("traces.budget"), open=False):
                budget = gr.Markdown(elem_id="trace-budget")
            with gr.Accordion(t("traces.agent"), open=False):
                steps = gr.Dataframe(
                    headers=AGENT_HEADERS,
                    interactive=False,
                    elem_id="trace-agent",
                    datatype=AGENT_TYPES,  # type: ignore[arg-type]
                )
            with gr.Row():
                doc = gr.Dropdown(label=t("traces.why_doc"), elem_id="why-doc", scale=3)
                why = gr.Button(t("traces.why"), elem_id="why-button", scale=1)
            why_text = gr.Markdown(elem_id="why-text")
            exported = gr.File(label=t("traces.export"), elem_id="trace-export", interactive=False)
            save_form = build_save_case()
        with gr.Accordion(t("traces.experience"), open=False):
            learned = gr.Markdown(elem_id="trace-experience")
        cases_h, cases, to_delete = build_eval_panel(engine, owner, current, save_form)
        expected = save_form[0]

        filters = [owner, text, status, mode, rating, everyone]
        for trigger in (refresh.click, text.submit, status.change, mode.change, rating.change, everyone.change,
                        tab.select):  # fmt: skip
            trigger(h.recent, inputs=filters, outputs=[listing, ids])
        tab.select(cases_h.rows, inputs=[owner], outputs=[cases])
        tab.select(cases_h.case_choices, inputs=[owner], outputs=[to_delete])
        listing.select(
            h.open,
            inputs=[ids, owner, everyone],
            outputs=[
                current,
                head,
                plot,
                intents,
                search,
                channels,
                fused,
                note,
                calls,
                budget,
                steps,
                doc,
                expected,
                exported,
                detail,
            ],
        )
        search.change(h.search_views, inputs=[current, search], outputs=[channels, fused, note])
        why.click(h.why_not, inputs=[current, doc], outputs=[why_text])
        tab.select(h.everyone_box, outputs=[everyone])
        tab.select(h.experience, outputs=[learned])
    return tab
