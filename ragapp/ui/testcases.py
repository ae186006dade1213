"""Test cases in the Traces tab: save a traced question with the documents that should answer it (and the words
its right answer holds, or that a refusal is right), then score all saved cases with the current retrieval
settings, and with changed ones side by side, before keeping a change; or answer them all, judge each answer
(accurate, missing, hallucinated) and compare with the run before (``case_truth``).
"""

from typing import Any

import gradio as gr
import pandas as pd

from ragapp.engine import FUSIONS, CaseReport, TestCase, Trace
from ragapp.engine.engine import Engine
from ragapp.ui.case_truth import ANSWER_HEADERS, ANSWER_TYPES, answers_frame, truth_markdown
from ragapp.ui.handlers import user_errors
from ragapp.ui.i18n import both, t
from ragapp.ui.markup import escape_text
from ragapp.ui.said_words import said_or_english
from ragapp.ui.state import actor_of, owner_of
from ragapp.ui.trace_charts import RUN_MARKS, metrics_chart

CASE_HEADERS = ["#", "Question", "Expected documents", "Knowledge bases", "Saved (UTC)"]
NO_CASES = (
    "No test cases yet: open a request and use “Save as test case” first.",
    "还没有测试用例：请先打开一个请求，点击“保存为测试用例”。",
)
SaveForm = tuple[gr.Dropdown, gr.Textbox, gr.Checkbox, gr.Button, gr.Markdown]
RESULT_HEADERS = ["Run", "Question", "Expected", "First found at", "Hit", "MRR", "nDCG", "Top documents", "ms"]
RESULT_TYPES = ["html", "str", "str", "html", "str", "number", "number", "str", "number"]
# The engine's names of the two runs, in both languages.
RUN_WORDS = {"current settings": ("current settings", "当前设置"), "with changes": ("with changes", "改动后")}


def run_label(label: str, number: int) -> str:
    """'① current settings': the run's mark in the chart and its name, in both languages."""
    pair = RUN_WORDS.get(label)
    return f"{RUN_MARKS[number % len(RUN_MARKS)]} " + (both(*pair) if pair else label)


class CaseHandlers:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def rows(self, stored: str | None, request: gr.Request | None = None) -> pd.DataFrame:
        cases = self.engine.observability.test_cases(owner_of(self.engine, stored, request))
        rows = [[c.id, c.question, _expects(c), ", ".join(c.kbs) if c.kbs else "*", c.created_at[:19]] for c in cases]
        return pd.DataFrame(rows, columns=CASE_HEADERS)

    def case_choices(self, stored: str | None, request: gr.Request | None = None) -> Any:
        cases = self.engine.observability.test_cases(owner_of(self.engine, stored, request))
        return gr.update(choices=[(f"#{c.id} {c.question[:60]}", c.id) for c in cases], value=None)

    @user_errors
    def save(
        self,
        stored: str | None,
        trace: Trace | None,
        expected: list[str] | None,
        must_contain: str | None = "",
        unanswerable: bool | None = False,
        request: gr.Request | None = None,
    ) -> tuple[str, Any, Any, Any, Any]:
        owner = owner_of(self.engine, stored, request)
        if not trace:
            raise gr.Error(both("Open a request first.", "请先打开一个请求。"))
        if trace.kind != "chat":
            raise gr.Error(both("Only questions can become test cases.", "只有提问才能存为测试用例。"))
        if not expected and not unanswerable:
            raise gr.Error(
                both(
                    "Pick the documents that should answer this question, or tick that the documents do not hold "
                    "the answer.",
                    "请选择应回答此问题的文档，或勾选“文档中没有答案”。",
                )
            )
        kbs = None
        searches = trace.retrievals
        if searches and all(s.kbs is not None for s in searches):
            kbs = sorted({kb for s in searches for kb in s.kbs or ()})
        try:
            case = self.engine.observability.save_test_case(
                owner, trace.question, expected or [], kbs, trace.id or None,
                must_contain=must_contain or "", unanswerable=bool(unanswerable),
            )  # fmt: skip
        except ValueError as exc:  # InvalidTestCase: its record in the page's language
            raise gr.Error(said_or_english(getattr(exc, "said", None), str(exc))) from None
        gr.Info(both(f"Saved test case #{case.id}.", f"已存为测试用例 #{case.id}。"))
        if case.unanswerable:
            message = both(
                f"Saved as test case #{case.id}: a refusal is right.", f"已存为测试用例 #{case.id}：拒答才正确。"
            )
        else:
            expects = escape_text(_expects(case))
            message = both(
                f"Saved as test case #{case.id}: expects {expects}.", f"已存为测试用例 #{case.id}：应命中 {expects}。"
            )
        cleared = gr.update(value="")
        return "✅ " + message, self.rows(stored, request), self.case_choices(stored, request), cleared, False

    @user_errors
    def delete(self, stored: str | None, case_id: int | None, request: gr.Request | None = None) -> tuple[Any, Any]:
        if case_id is None:
            raise gr.Error(both("Pick a test case to delete.", "请选择要删除的测试用例。"))
        self.engine.observability.delete_test_case(owner_of(self.engine, stored, request), int(case_id))
        return self.rows(stored, request), self.case_choices(stored, request)

    @user_errors
    def run(
        self,
        stored: str | None,
        fusion: str,
        top_k: float,
        candidates: float,
        min_score: float,
        rerank: bool,
        request: gr.Request | None = None,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 (Gradio's idiom)
    ) -> tuple[str, Any, pd.DataFrame]:
        owner = owner_of(self.engine, stored, request)
        if not self.engine.observability.test_cases(owner):
            raise gr.Error(both(*NO_CASES))
        progress(0.1, desc="…")  # the progress bar's own text is not translated: it says no words
        current = self.engine.settings.retrieval
        changes: dict[str, Any] = {}
        for key, value, kind in (
            ("fusion", fusion, str),
            ("context_top_k", top_k, int),
            ("candidate_limit", candidates, int),
            ("min_rerank_score", min_score, float),
        ):
            if value is not None and kind(value) != getattr(current, key):
                changes[key] = kind(value)
        if bool(rerank) != self.engine.status().reranking_enabled:  # off, or the shipped reranker on
            changes["rerank"] = bool(rerank)
        actor = actor_of(self.engine, request)  # each case searches only what the signed-in user may read
        reports = self.engine.observability.run_test_cases(owner, changes or None, actor=actor)
        return summary_markdown(reports, changes), metrics_chart(reports), results_frame(reports)

    @user_errors
    def check(
        self,
        stored: str | None,
        request: gr.Request | None = None,
        progress: gr.Progress = gr.Progress(),  # noqa: B008 (Gradio's idiom)
    ) -> tuple[str, pd.DataFrame]:
        """Answer every saved case, judge each, keep the run and show it beside the run before."""
        owner = owner_of(self.engine, stored, request)
        if not self.engine.observability.test_cases(owner):
            raise gr.Error(both(*NO_CASES))
        progress(0.0, desc="…")

        def step(done: int, total: int) -> None:
            progress(done / total, desc=f"{done}/{total}")

        checked = self.engine.observability.check_answers(owner, actor=actor_of(self.engine, request), progress=step)
        return truth_markdown(checked), answers_frame(checked)


def _expects(case: TestCase) -> str:
    """What a case expects: its documents, and the words of its right answer (or that a refusal is right)."""
    if case.unanswerable:
        return "∅"
    return ", ".join(case.expected) + (f" · “{case.must_contain}”" if case.must_contain else "")


def summary_markdown(reports: list[CaseReport], changes: dict[str, Any]) -> str:
    head = [both(*words) for words in (("run", "运行"), ("hit rate", "命中率"), ("settings", "设置"))]
    lines = [f"| {head[0]} | {head[1]} | MRR@10 | nDCG@10 | {head[2]} |", "|---|---|---|---|---|"]
    for number, r in enumerate(reports):
        shown = ", ".join(f"{k}={v}" for k, v in r.settings.items())
        lines.append(f"| {run_label(r.label, number)} | {r.hit_rate:.3f} | {r.mrr:.3f} | {r.ndcg:.3f} | {shown} |")
    if len(reports) == 2:
        delta = reports[1].ndcg - reports[0].ndcg
        better, worse = delta > 1e-9, delta < -1e-9
        verdict = both("better", "更好") if better else both("worse", "更差") if worse else both("the same", "持平")
        changed = ", ".join(f"{k}={v}" for k, v in changes.items())
        lines.append(
            "\n"
            + both(
                f"With the changes ({changed}) nDCG is **{verdict}** ({delta:+.3f}). To keep them, set the matching "
                "`RAGAPP_RETRIEVAL__*` variables (see docs/configuration.md) and restart.",
                f"改动后（{changed}）nDCG **{verdict}**（{delta:+.3f}）。要保留改动，请设置对应的 "
                "`RAGAPP_RETRIEVAL__*` 变量（见 docs/configuration.md）并重启。",
            )
        )
    return "\n".join(lines)


def results_frame(reports: list[CaseReport]) -> pd.DataFrame:
    rows = [
        [
            run_label(r.label, number),
            c.question,
            ", ".join(c.expected),
            c.first_rank or both("not in top 10", "不在前 10 名"),
            "✓" if c.hit else "✗",
            round(c.mrr, 3),
            round(c.ndcg, 3),
            ", ".join(c.ranked[:5]),
            round(c.seconds * 1000),
        ]
        for number, r in enumerate(reports)
        for c in r.results
    ]
    return pd.DataFrame(rows, columns=RESULT_HEADERS)


def build_save_case() -> SaveForm:
    """Inside a trace's view: the documents that should answer it, the words its right answer holds or that a
    refusal is right, and the save button (wired by ``build_eval_panel``, which owns the list the save adds to)."""
    with gr.Row():
        expected = gr.Dropdown(multiselect=True, label=t("cases.docs"), elem_id="case-docs", scale=3)
        save = gr.Button(t("cases.save"), elem_id="case-save", scale=1)
    with gr.Row():
        words = gr.Textbox(label=t("cases.must_contain"), placeholder=t("cases.must_contain_hint"),
                           elem_id="case-answer", scale=3)  # fmt: skip
        unanswerable = gr.Checkbox(label=t("cases.unanswerable"), elem_id="case-unanswerable", scale=2)
    saved = gr.Markdown(elem_id="case-saved")
    return expected, words, unanswerable, save, saved


def build_eval_panel(
    engine: Engine,
    owner: gr.BrowserState,
    current: gr.State,
    save_form: SaveForm,
) -> tuple[CaseHandlers, gr.Dataframe, gr.Dropdown]:
    """Saved test cases and the evaluation run, with optional setting changes to compare; the answer check."""
    h = CaseHandlers(engine)
    expected, words, unanswerable, save, saved = save_form
    s = engine.settings.retrieval
    with gr.Accordion(t("cases.panel"), open=True, elem_id="eval-panel"):
        cases = gr.Dataframe(headers=CASE_HEADERS, interactive=False, elem_id="case-list", label=t("cases.saved"))
        with gr.Row():
            to_delete = gr.Dropdown(label=t("cases.to_delete"), elem_id="case-delete-choice", scale=3)
            delete = gr.Button(t("common.delete"), variant="stop", elem_id="case-delete", scale=1)
        gr.Markdown(t("cases.try"))
        with gr.Row():
            fusion = gr.Dropdown(FUSIONS.names(), value=s.fusion, label=t("cases.fusion"), elem_id="eval-fusion")
            top_k = gr.Number(s.context_top_k, precision=0, minimum=1, label=t("cases.top_k"), elem_id="eval-topk")
            limit = gr.Number(s.candidate_limit, precision=0, minimum=1, label=t("cases.limit"))
            min_score = gr.Number(s.min_rerank_score, label=t("cases.min_score"))
            rerank = gr.Checkbox(engine.status().reranking_enabled, label=t("cases.rerank"), elem_id="eval-rerank")
        run = gr.Button(t("cases.run"), variant="primary", elem_id="eval-run")
        metrics = gr.Markdown(elem_id="eval-metrics")
        chart = gr.Plot(label=t("cases.chart"), elem_id="eval-chart")
        results = gr.Dataframe(
            headers=RESULT_HEADERS,
            interactive=False,
            elem_id="eval-results",
            wrap=True,
            datatype=RESULT_TYPES,  # type: ignore[arg-type]
        )
        gr.Markdown(t("cases.answers"))
        check = gr.Button(t("cases.check"), variant="primary", elem_id="eval-answers")
        truth = gr.Markdown(elem_id="eval-truth")
        answers = gr.Dataframe(
            headers=ANSWER_HEADERS,
            interactive=False,
            elem_id="eval-answer-results",
            wrap=True,
            datatype=ANSWER_TYPES,  # type: ignore[arg-type]
        )
    save.click(
        h.save,
        inputs=[owner, current, expected, words, unanswerable],
        outputs=[saved, cases, to_delete, words, unanswerable],
    )
    check.click(h.check, inputs=[owner], outputs=[truth, answers])
    delete.click(h.delete, inputs=[owner, to_delete], outputs=[cases, to_delete])
    run.click(h.run, inputs=[owner, fusion, top_k, limit, min_score, rerank], outputs=[metrics, chart, results])
    return h, cases, to_delete
