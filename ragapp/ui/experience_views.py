"""Procedural memory in the Traces tab: the evidence an answer's mode and tool order rested on (under the trace's
header), and the whole table of what was learned (an accordion, for those who may read every trace). Pure
functions over the trace and the table's rows (no gradio), so each is testable alone."""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.core.events import Tally
from ragapp.engine import ExperienceRow, Trace
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text

KIND_WORDS = {
    "comparison": ("comparison", "比较"),
    "multi-part": ("several parts", "多个小问题"),
    "bridge": ("bridge (find one thing first)", "桥接（先找到另一事物）"),
    "names": ("several names", "多个名称"),
    "single": ("single question", "单个问题"),
}
_MODES = {"workflow": ("workflow", "工作流"), "agent": ("agent", "智能体")}


def experience_lines(trace: Trace) -> str:
    """What procedural memory knew about this kind of question and what it changed ("" when it was not used)."""
    e = trace.experience
    if e is None:
        return ""
    title = both("Procedural memory", "过程记忆")
    lines = [f"**{title}** · {both('kind of question', '问题类型')} **{_word(KIND_WORDS, e.kind)}**"]
    modes = "; ".join(f"{_word(_MODES, m.name)} {_kept(m)}" for m in e.modes)
    lines.append(f"- {both('answers kept, per mode', '各模式被保留的回答')}: {modes}")
    if e.tools:
        tools = "; ".join(f"`{t.name}` {_kept(t)}" for t in e.tools)
        lines.append(f"- {both('agent answers kept, per tool used', '智能体回答被保留的比例（按所用工具）')}: {tools}")
    if e.mode:
        took = both("Auto took", "自动模式选择了")
        lines.append(f"- {took} **{_word(_MODES, e.mode)}** {both('because of it', '（依据上述经验）')}")
    else:
        lines.append(f"- {both('the mode was not changed', '模式未改变')}")
    if e.tool_order:
        order = ", ".join(f"`{name}`" for name in e.tool_order)
        lines.append(f"- {both('tools listed to the model in this order', '工具按此顺序列给模型')}: {order}")
    return "\n\n" + "\n".join(lines)


def experience_table(rows: Sequence[ExperienceRow] | None) -> str:
    """The whole table as Markdown: per kind of question, intent leaf (routing's, where it chose one) and mode,
    answers and how many were kept."""
    if rows is None:
        return both(
            "Procedural memory is off (RAGAPP_PROCEDURAL__ENABLED).", "过程记忆未开启（RAGAPP_PROCEDURAL__ENABLED）。"
        )
    if not rows:
        return both("Nothing learned yet: no answer has had a verdict.", "尚未学到任何经验：还没有回答得到评价。")
    head = f"| {both('kind of question', '问题类型')} | {both('intent', '意图')} | {both('mode', '模式')} | "
    lines = [head + f"{both('kept', '保留')} |", "|---|---|---|---|"]
    for r in rows:
        kept = _kept(Tally(r.mode, r.kept, r.answers))
        leaf = escape_text(r.leaf) if r.leaf else "–"
        lines.append(f"| {_word(KIND_WORDS, r.kind)} | {leaf} | {_word(_MODES, r.mode)} | {kept} |")
    return "\n".join(lines)


def _kept(t: Tally) -> str:
    return both(f"{t.kept} of {t.answers} kept", f"{t.answers} 个中保留 {t.kept} 个")


def _word(words: dict[str, tuple[str, str]], value: str) -> str:
    english, chinese = words.get(value, (value, value))
    return both(english, chinese)
