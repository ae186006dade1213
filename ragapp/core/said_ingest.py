"""The catalogue's words for ingesting a file (``ragapp.core.said``): refusals and what a parser left out."""

from __future__ import annotations

# code: (English, Chinese)
INGEST: dict[str, tuple[str, str]] = {
    "ingest.duplicate_hidden": (
        "{name}: the same file is already stored, in a knowledge base you may not read; nothing changed. An "
        "administrator can tell you where.",
        "{name}：同一文件已存储在你无权读取的知识库中；未作改动。管理员可以告诉你它在哪里。",
    ),
    "ingest.repetition": (
        "{name}: it is mostly repetition: its {chunks} chunks hold {distinct} bytes of distinct text "
        "(compressed), enough for {allowed} chunks (RAGAPP_INGEST__TEXT_BYTES_PER_CHUNK); nothing was added. "
        "Take the repeated part out, or upload the part that holds the text.",
        "{name}：内容大多是重复的：它的 {chunks} 个片段只含 {distinct} 字节不重复的文字（压缩后），只够 {allowed} "
        "个片段（RAGAPP_INGEST__TEXT_BYTES_PER_CHUNK）；未加入任何内容。请删去重复的部分，或只上传含有文字的部分。",
    ),
    "ingest.flood_elements": (
        "{name}: it holds more than {limit} XML elements, as no real document does: it is built to flood the "
        "reader (it is not corrupt); nothing was added.",
        "{name}：其 XML 含有超过 {limit} 个元素，真实的文档不会这样：这是为拖垮解析器而构造的文件（并未损坏）；"
        "未加入任何内容。",
    ),
    "ingest.flood_depth": (
        "{name}: it nests its XML deeper than 256 levels, as no real document does: it is built to flood the "
        "reader (it is not corrupt); nothing was added.",
        "{name}：其 XML 嵌套超过 256 层，真实的文档不会这样：这是为拖垮解析器而构造的文件（并未损坏）；"
        "未加入任何内容。",
    ),
    "ingest.flood_text": (
        "{name}: it holds one run of text over 10 MB, as no real document does: it is built to flood the reader "
        "(it is not corrupt); nothing was added.",
        "{name}：其中一段文字超过 10 MB，真实的文档不会这样：这是为拖垮解析器而构造的文件（并未损坏）；"
        "未加入任何内容。",
    ),
}
# value name: {value: (English, Chinese)}
INGEST_TERMS: dict[str, dict[str, tuple[str, str]]] = {}
