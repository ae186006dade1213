"""The catalogue's words for the background enrichment of a knowledge base (``ragapp.core.said``): its
progress in the Knowledge tab and the API, and the note on an answer from a base still being indexed."""

from __future__ import annotations

# code: (English, Chinese)
ENRICH: dict[str, tuple[str, str]] = {
    "enrich.still_indexing": (
        "Still being indexed: {kbs}. Passages not yet indexed are found by their words only, so this answer may "
        "miss some.",
        "仍在建立索引：{kbs}。尚未建立索引的段落只能按字词找到，所以这个回答可能有遗漏。",
    ),
    "enrich.progress": (
        "{kb}: {step} for {done} of {total} passages, {pace:.0f} a minute.",
        "{kb}：{step}已完成 {done}/{total} 段，每分钟 {pace:.0f} 段。",
    ),
    "enrich.progress_starting": (
        "{kb}: {step} for {done} of {total} passages.",
        "{kb}：{step}已完成 {done}/{total} 段。",
    ),
    "enrich.progress_paused": (
        "{kb}: {step} for {done} of {total} passages; paused.",
        "{kb}：{step}已完成 {done}/{total} 段；已暂停。",
    ),
    "enrich.done": ("{kb}: fully indexed.", "{kb}：索引已全部建立。"),
}
# value name: {value: (English, Chinese)}: a step's name as the progress line says it
ENRICH_TERMS: dict[str, dict[str, tuple[str, str]]] = {
    "step": {"vectors": ("vectors", "向量"), "questions": ("questions written", "问题编写")},
}
