"""What the chat shows of long-term memory: the step saying which memories an answer used, and the "Remember
this" choice under an answer that offers to keep something (``ragapp.engine.memories``)."""

from __future__ import annotations

import gradio as gr

from ragapp.core.events import RecallEvent, RememberedEvent
from ragapp.ui.i18n import both
from ragapp.ui.markup import escape_text

# Under an answer whose question said something worth keeping; renamed in a Chinese page (page_language.CHOICES).
REMEMBER_CHOICE = {"label": "Remember this", "value": ":remember:"}


def recall_message(event: RecallEvent) -> gr.ChatMessage:
    """'🧠 Used 1 memory: I use the V2 Pro', with each memory and when it was kept."""
    count = len(event.memories)
    first = escape_text(event.memories[0].text) if event.memories else ""
    title = "🧠 " + both(
        f"Used {count} memory: {first}" if count == 1 else f"Used {count} memories: {first} …",
        f"用到了 {count} 条记忆：{first}" + (" …" if count > 1 else ""),
    )
    lines = [f"- {escape_text(m.text)} <small>({escape_text(m.created_at[:10])})</small>" for m in event.memories]
    note = both(
        "What you asked me to remember: it shapes the answer, and is never cited as a document.",
        "你让我记住的内容：它影响回答，但不会作为文档被引用。",
    )
    return gr.ChatMessage(
        role="assistant",
        content="\n".join(lines) + f"\n\n<small>{note}</small>",
        metadata={"title": title, "status": "done"},
    )


def kept_note(event: RememberedEvent) -> str:
    """What a toast says after keeping (or failing to keep) a memory."""
    text = escape_text(event.text)
    if not event.memory_id:
        if (
            event.said is not None
            and (en := event.said.worded(False, escape_text))
            and (zh := event.said.worded(True, escape_text))
        ):
            return both(f"Not kept: {en}", f"没有记住：{zh}")
        return both(f"Not kept: {escape_text(event.reason)}", f"没有记住：{escape_text(event.reason)}")
    said = both(f"Remembered: “{text}”.", f"已记住：“{text}”。")
    if event.cut:
        said += " " + both(
            f"{len(event.cut)} sentence(s) addressed to the assistant were left out.",
            f"{len(event.cut)} 句写给助手的指令没有被记住。",
        )
    return said
