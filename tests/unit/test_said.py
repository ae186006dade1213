"""The one catalogue of what the engine tells a person (``ragapp.core.said``): every entry in both languages with
the same values, every code the engine writes worded there, and one example of each entry as a page shows it."""

from __future__ import annotations

import ast
import re
import string
from html import unescape
from pathlib import Path

import pytest

from ragapp.core.access import Action, Actor, require
from ragapp.core.errors import AccessDenied, IngestError
from ragapp.core.said import CATALOGUE, TERMS, Said, english_of
from ragapp.core.said_admin import ADMIN
from ragapp.core.said_answer import ANSWER
from ragapp.core.said_enrich import ENRICH
from ragapp.core.said_ingest import INGEST
from ragapp.core.said_intents import INTENTS
from ragapp.core.said_search import SEARCH
from ragapp.core.said_web import WEB
from ragapp.core.types import DocumentRecord, IngestResult, ParseReport
from ragapp.engine.library import DocumentView
from ragapp.ingest.parsing import parse_file
from ragapp.ui.documents import quality_line
from ragapp.ui.handlers import ingest_line
from ragapp.ui.said_words import said_or_english, said_text
from tests.text import shown

ROOT = Path(__file__).resolve().parents[2] / "ragapp"
_HAN = re.compile(r"[\u4e00-\u9fff]")
_CODE = re.compile(r"[a-z_]+\.[a-z0-9_]+")
_SAID_HOMES = {"ragapp.core.said", "ragapp.core.types"}
_PREFIXES = {code.split(".")[0] for code in CATALOGUE}

# (record, English, Chinese): one of each entry
EXAMPLES: list[tuple[Said, str, str]] = [
    (
        Said("relevance.keyword_query", {"rank": 2}),
        "a keyword query: keyword rank 2, holds every word of it",
        "关键词查询：关键词排名 2，包含其中的每个词",
    ),
    (Said("relevance.names_none"), "names none of what the question names", "没有提到问题中的任何名称"),
    (
        Said("relevance.agree", {"ranks": "keyword 1, vector 2", "rank": 1}),
        "both channels agree (keyword 1, vector 2; fused rank 1)",
        "两个通道都找到了它（keyword 1, vector 2；融合排名 1）",
    ),
    (Said("relevance.rerank_below", {"min": 0.2}), "rerank score below 0.2", "重排得分低于 0.2"),
    (
        Said("relevance.rerank_margin", {"margin": 0.3}),
        "more than 0.3 below the best rerank score",
        "比最高重排得分低 0.3 以上",
    ),
    (Said("relevance.rerank_kept", {"min": 0.2}), "rerank score ≥ 0.2", "重排得分 ≥ 0.2"),
    (
        Said("relevance.other_unseen"),
        "other language, not found by the vector channel",
        "其他语言，向量通道没有找到",
    ),
    (
        Said("relevance.other_low", {"rank": 7}),
        "other language: vector rank 7 or similarity too low",
        "其他语言：向量排名 7，或相似度过低",
    ),
    (
        Said("relevance.other_alike", {"lead": 0.01}),
        "other language: similarity only +0.010 against the other-language median",
        "其他语言：相似度只比其他语言的中位数高 +0.010",
    ),
    (
        Said("relevance.other_kept", {"rank": 2, "min": 0.74}),
        "other language: vector rank 2, similarity ≥ 0.74",
        "其他语言：向量排名 2，相似度 ≥ 0.74",
    ),
    (
        Said("relevance.other_kept_lead", {"rank": 2, "min": 0.74, "lead": 0.031}),
        "other language: vector rank 2, similarity ≥ 0.74, +0.031 above the other-language median",
        "其他语言：向量排名 2，相似度 ≥ 0.74，比其他语言的中位数高 +0.031",
    ),
    (
        Said("relevance.other_names", {"rank": 1}),
        "other language: keyword rank 1 among the other-language passages (shared names)",
        "其他语言：在其他语言的资料中关键词排名 1（有共同的名称）",
    ),
    (
        Said("relevance.remote", {"channel": "remote:hr"}),
        "kept by remote:hr's own relevance gate",
        "remote:hr 自己的相关性过滤保留了它",
    ),
    (Said("relevance.vector", {"min": 0.875}), "vector similarity ≥ 0.875", "向量相似度 ≥ 0.875"),
    (Said("relevance.keyword", {"min": 6.0}), "keyword score ≥ 6", "关键词得分 ≥ 6"),
    (
        Said("relevance.both", {"min": 0.8}),
        "both channels, vector similarity ≥ 0.8",
        "两个通道都找到，向量相似度 ≥ 0.8",
    ),
    (Said("relevance.below"), "channel scores below the thresholds", "各通道得分都低于阈值"),
    (
        Said("skipped.stands_alone"),
        "the question stands alone: searched as asked, no model call",
        "问题本身完整：按原问题检索，未调用模型",
    ),
    (
        Said("skipped.parts_by_wording"),
        "the question stands alone: its parts are cut by its wording, no model call",
        "问题本身完整：按字面拆分各个小问题，未调用模型",
    ),
    (
        Said("skipped.strong_search"),
        "the question as asked already finds a strong passage: searched as asked, no model call",
        "按原问题已能检索到高度相关的段落：按原问题检索，未调用模型",
    ),
    (
        Said("skipped.own_language"),
        "not translated: the passages kept are in the question's language, none in the other came near it; "
        "no model call",
        "未翻译：保留的段落都是提问所用语言的，另一种语言中没有相关段落；未调用模型",
    ),
    (
        Said("routing.off"),
        "intent routing is off (RAGAPP_WORKFLOW__ROUTE=false): searching everything",
        "意图路由已关闭（RAGAPP_WORKFLOW__ROUTE=false）：检索全部",
    ),
    (Said("routing.no_leaves"), "the intent tree has no leaves: searching everything", "意图树没有叶子意图：检索全部"),
    (
        Said("routing.no_intent", {"error": "timed out"}),
        "no intent (timed out): searching everything",
        "没有意图（timed out）：检索全部",
    ),
    (
        Said("routing.below", {"path": "Kettle > Specs", "score": 0.31, "min": 0.5}),
        "the best intent, Kettle > Specs, scored 0.31 < 0.50: searching everything",
        "得分最高的意图 Kettle > Specs 只有 0.31 < 0.50：检索全部",
    ),
    (
        Said("routing.none_matched"),
        "the model matched no intent: searching everything",
        "模型没有匹配到任何意图：检索全部",
    ),
    (Said("routing.named", {"paths": "V1 > Specs"}), "the question names V1 > Specs", "问题提到了 V1 > Specs"),
    (
        Said("routing.named_over", {"paths": "V1 > Specs", "model": "V2 > Specs"}),
        "the question names V1 > Specs (the model chose V2 > Specs)",
        "问题提到了 V1 > Specs（模型选的是 V2 > Specs）",
    ),
    (
        Said("routing.close", {"count": 2, "margin": 0.1, "paths": "A (0.80); B (0.75)"}),
        "2 intents under different parents scored within 0.10: A (0.80); B (0.75)",
        "2 个不同上级下的意图得分相差不到 0.10：A (0.80); B (0.75)",
    ),
    (
        Said("routing.twins", {"name": "Specs", "count": 2, "paths": "V1 > Specs; V2 > Specs"}),
        "'Specs' exists under 2 parents and the question names none of them: V1 > Specs; V2 > Specs",
        "“Specs”在 2 个上级下都有，问题没有指明是哪一个：V1 > Specs; V2 > Specs",
    ),
    (
        Said("routing.routed", {"paths": "Kettle > Specs (0.91)"}),
        "routed to Kettle > Specs (0.91)",
        "路由到 Kettle > Specs (0.91)",
    ),
    (
        Said("routing.system", {"path": "Greeting", "score": 0.97}),
        "a message to the assistant: Greeting (0.97)",
        "发给助手的话：Greeting (0.97)",
    ),
    (Said("routing.user_all"), "the user chose to search everything", "用户选择了检索全部"),
    (Said("routing.user_chose", {"path": "V1 > Specs"}), "the user chose V1 > Specs", "用户选择了 V1 > Specs"),
    (Said("routing.choice_gone", {"choice": "v3.specs"}), "'v3.specs' no longer exists", "'v3.specs' 已不存在"),
    (
        Said("routing.memory", {"memory": "I use the V2", "label": "V2 › Specs"}),
        "your memory “I use the V2” names V2 › Specs",
        "你的记忆“I use the V2”提到了 V2 › Specs",
    ),
    (
        Said("routing.no_model_call", {"reply": "embedder: company 0.812"}),
        " (no model call: embedder: company 0.812)",
        "（未调用模型：embedder: company 0.812）",
    ),
    (
        Said("routing.nothing_relevant"),
        "; but nothing in the knowledge bases is relevant: not asking back, searching everything",
        "；但知识库中没有相关的内容：不反问，检索全部",
    ),
    (
        Said("routing.best_elsewhere", {"kb": "hr"}),
        "; but the best passage is in hr: not asking back, searching everything",
        "；但最相关的段落在 hr 中：不反问，检索全部",
    ),
    (
        Said("routing.within_kbs", {"kbs": "a, b"}),
        "; only intents within the chosen knowledge bases (a, b) kept",
        "；只保留所选知识库（a, b）内的意图",
    ),
    (
        Said("routing.within_kbs_none", {"kbs": "a"}),
        "; only intents within the chosen knowledge bases (a) kept: none, so searching them all",
        "；只保留所选知识库（a）内的意图：一个也没有，因此检索全部",
    ),
    (
        Said("confidence.unsupported", {"n": 1, "of": 3}),
        "1 of 3 sentences not in the passages",
        "3 句中有 1 句不在原文中",
    ),
    (Said("confidence.none_supported"), "none of its sentences is in the passages", "没有一句在原文中"),
    (Said("confidence.supported", {"n": 2, "of": 2}), "2 of 2 sentences in the passages", "2 句中有 2 句在原文中"),
    (
        Said("confidence.citation_for_value"),
        "a citation stands where the answer's value belongs",
        "回答中该给出数值的地方只有一个引用",
    ),
    (
        Said("confidence.kind_missing", {"kind": "year"}),
        "the question asks for a year; the answer gives none",
        "问题问的是年份，回答没有给出",
    ),
    (Said("confidence.kind_given", {"kind": "number"}), "gives the number asked for", "给出了所问的数字"),
    (
        Said("confidence.quote_lacks", {"missing": "90, 120"}),
        "the quoted sentence does not say 90, 120",
        "引用的原文句子没有说 90, 120",
    ),
    (Said("confidence.quote_same"), "the quoted sentence says the same", "引用的原文句子说法一致"),
    (
        Said("confidence.parts_missing", {"n": 1, "of": 2}),
        "1 of 2 parts not in the documents",
        "2 个部分中有 1 个在文档中找不到",
    ),
    (Said("confidence.part", {"n": 2}), "part 2: ", "第 2 部分："),
    (Said("confidence.part_only", {"n": 1}), "part 1", "第 1 部分"),
    (Said("confidence.part_figure", {"n": 1, "figure": "0.81"}), "part 1: 0.81", "第 1 部分：0.81"),
    (
        Said("confidence.echoed"),
        "the model's reply only repeated the question; the documents' own sentence is shown instead",
        "模型的回复只是重复了问题，改为显示文档的原句",
    ),
    (
        Said("notice.agent_failed", {"error": "timed out"}),
        "The agent could not work on this question (timed out); answering with the workflow instead.",
        "智能体无法处理这个问题（timed out），改用工作流回答。",
    ),
    (
        Said("notice.model_failed_midway", {"error": "boom"}),
        "The model failed mid-way (boom); answering from what was found.",
        "模型中途出错（boom），根据已找到的资料回答。",
    ),
    (
        Said("notice.agent_repeating"),
        "The agent kept repeating a call; answering from what was found.",
        "智能体一直重复同一个调用，根据已找到的资料回答。",
    ),
    (
        Said("notice.step_limit", {"n": 6}),
        "Reached the limit of 6 agent steps; answering from what was found.",
        "已达到 6 步的上限，根据已找到的资料回答。",
    ),
    (
        Said("notice.llm_failed", {"error": "LLMError: down"}),
        "The language model failed (LLMError: down)",
        "语言模型出错（LLMError: down）",
    ),
    (Said("notice.llm_error", {"error": "Server said 503"}), "Server said 503", "语言模型出错：Server said 503"),
    (Said("notice.llm_empty"), "The language model returned an empty answer", "语言模型返回了空回答"),
    (
        Said("budget.history_left_out", {"n": 4}),
        "4 earlier messages left out of the prompt",
        "4 条较早的消息未放入提示词",
    ),
    (
        Said("budget.summary_shortened", {"a": 1300, "b": 90}),
        "summary shortened from 1300 to 90 tokens",
        "摘要从 1300 个词元缩短到 90 个",
    ),
    (
        Said("budget.condensed", {"n": 1}),
        "passages after the best condensed to 1 sentence(s) each",
        "除最相关的段落外，每段压缩为 1 句",
    ),
    (Said("budget.dropped", {"n": 2}), "2 passages dropped", "舍弃了 2 个段落"),
    (
        Said("budget.tools_shortened"),
        "tool descriptions shortened to their first sentence",
        "工具描述缩短为第一句",
    ),
    (
        Said("budget.tools_left_out"),
        "tool descriptions left out (names and arguments only)",
        "省略了工具描述（只保留名称和参数）",
    ),
    (
        Said("degraded.timed_out", {"channel": "vector", "s": 5.0}),
        "vector search timed out after 5 s",
        "vector 检索超时（5 秒）",
    ),
    (
        Said("degraded.failed", {"channel": "keyword", "error": "OSError"}),
        "keyword search failed (OSError)",
        "keyword 检索失败（OSError）",
    ),
    (
        Said("degraded.uses", {"channels": ["keyword", "remote:hr"]}),
        "; this answer uses keyword and remote:hr search only",
        "；本次回答只用了 keyword、remote:hr 检索",
    ),
    (Said("degraded.none_answered"), "; no search channel answered", "；没有检索通道返回结果"),
    (
        Said("degraded.reranker", {"error": "RuntimeError"}),
        "reranker failed (RuntimeError); using the fused order",
        "重排序失败（RuntimeError）；改用融合后的排序",
    ),
    (
        Said("degraded.remote_skipped"),
        "Other ragapp sources were not searched: a document filter applies to this app's documents only.",
        "没有检索其他 ragapp 来源：文档筛选只适用于本应用的文档。",
    ),
    (
        Said("ingest.binary", {"name": "a.txt"}),
        "a.txt: this looks like a binary file, not text; nothing was added.",
        "a.txt：这看起来是二进制文件，不是文本；未加入任何内容。",
    ),
    (
        Said("ingest.pdf_password", {"name": "a.pdf"}),
        "a.pdf: the PDF is password-protected; remove the password and upload it again.",
        "a.pdf：该 PDF 有密码保护；请去掉密码后重新上传。",
    ),
    (
        Said("ingest.unsupported", {"name": "a.exe", "ext": ".exe", "known": ".pdf, .txt"}),
        "a.exe: files of type '.exe' are not supported. Use .pdf, .txt.",
        "a.exe：不支持“.exe”类型的文件。请使用 .pdf, .txt。",
    ),
    (Said("ingest.empty", {"name": "report.pdf"}), "report.pdf: the file is empty.", "report.pdf：文件是空的。"),
    (
        Said("ingest.unreadable", {"name": "broken.pdf", "ext": ".pdf", "error": "PdfReadError"}),
        "broken.pdf: could not read this .pdf file; it may be corrupt or password-protected (PdfReadError).",
        "broken.pdf：无法读取这个 .pdf 文件，它可能已损坏或有密码保护（PdfReadError）。",
    ),
    (Said("ingest.no_text", {"name": "a.md"}), "a.md: no text found.", "a.md：没有找到文字。"),
    (
        Said("ingest.no_text_read", {"name": "scan.pdf"}),
        "scan.pdf: no text found. The pages hold no text a reader or OCR could find (blank, or images too faint "
        "to read).",
        "scan.pdf：没有找到文字：页面上没有可读取或可经 OCR 识别的文字（空白页，或图像太模糊）。",
    ),
    (
        Said("ingest.no_text_ocr_off", {"name": "scan.pdf"}),
        "scan.pdf: no text found. Scanned pages and images are read by OCR, which is off "
        "(RAGAPP_INGEST__OCR=true turns it on).",
        "scan.pdf：没有找到文字。扫描页和图像要靠 OCR 读取，而 OCR 已关闭（RAGAPP_INGEST__OCR=true 可开启）。",
    ),
    (
        Said("ingest.already_there", {"name": "copy.txt", "doc": "notes.txt", "kb": "alpha"}),
        "copy.txt: already in the knowledge base as notes.txt in 'alpha'; nothing changed.",
        "copy.txt：已在知识库中（“alpha”中的 notes.txt），未作改动。",
    ),
    (
        Said("ingest.lost_race", {"name": "a.txt"}),
        "a.txt: another upload of this file was stored first; nothing changed.",
        "a.txt：同一文件的另一次上传已先保存；未作改动。",
    ),
    (
        Said("ingest.too_large", {"name": "x.pdf", "size": 60.0, "limit": 50.0}),
        "x.pdf: 60.0 MB is over the 50 MB limit (RAGAPP_INGEST__MAX_FILE_MB).",
        "x.pdf：60.0 MB 超过了 50 MB 的上限（RAGAPP_INGEST__MAX_FILE_MB）。",
    ),
    (
        Said("ingest.too_many_chunks", {"name": "headings.md", "count": 30000, "limit": 50}),
        "headings.md: it makes 30,000 chunks, over the 50 a document may have (RAGAPP_INGEST__MAX_CHUNKS); "
        "split it into smaller files. Nothing was added.",
        "headings.md：它会切出 30,000 个片段，超过了每份文档 50 个的上限（RAGAPP_INGEST__MAX_CHUNKS）；"
        "请拆成较小的文件。未加入任何内容。",
    ),
    (
        Said("ingest.too_many_chunks_least", {"name": "hello.html", "count": 77368, "limit": 20000}),
        "hello.html: it makes at least 77,368 chunks, over the 20,000 a document may have "
        "(RAGAPP_INGEST__MAX_CHUNKS); split it into smaller files. Nothing was added.",
        "hello.html：它会切出至少 77,368 个片段，超过了每份文档 20,000 个的上限（RAGAPP_INGEST__MAX_CHUNKS）；"
        "请拆成较小的文件。未加入任何内容。",
    ),
    (
        Said("ingest.kb_name", {"name": "a/b"}),
        "Knowledge base name 'a/b' is not allowed: use 1 to 64 characters, each a letter (any language, Chinese "
        "included), a digit, a space, or one of - _ . (for example 'manuals-2024').",
        "知识库名称 'a/b' 不可用：请使用 1 到 64 个字符，每个字符是字母（任何语言，包括中文）、数字、空格，"
        "或 - _ . 之一（例如 'manuals-2024'）。",
    ),
    (
        Said("ingest.csv_unreadable", {"name": "a.csv", "error": "line contains NUL"}),
        "a.csv: this CSV file could not be read (line contains NUL).",
        "a.csv：无法读取这个 CSV 文件（line contains NUL）。",
    ),
    (
        Said("left_out.sheet_rows_after", {"sheet": "Data", "n": 100000.0}),
        "sheet Data: rows after the first 100,000 not read",
        "工作表 Data：第 100,000 行之后的行未读取",
    ),
    (
        Said("left_out.sheet_rows", {"sheet": "Data", "first": 4998, "last": 100000, "budget": "character"}),
        "sheet Data: rows 4,998–100,000 not read (character budget)",
        "工作表 Data：第 4,998–100,000 行未读取（超出字符预算）",
    ),
    (
        Said("left_out.sheet_rows_on", {"sheet": "Q3", "first": 12, "budget": "cell"}),
        "sheet Q3: rows from 12 on not read (cell budget)",
        "工作表 Q3：第 12 行起未读取（超出单元格预算）",
    ),
    (
        Said("left_out.book_rows", {"sheet": "Q3", "first": 12, "last": 40, "budget": "cell"}),
        "sheet Q3: rows 12–40 not read (the workbook's cell budget)",
        "工作表 Q3：第 12–40 行未读取（超出整个工作簿的单元格预算）",
    ),
    (
        Said("left_out.book_rows_on", {"sheet": "Q3", "first": 12, "budget": "cell"}),
        "sheet Q3: rows from 12 on not read (the workbook's cell budget)",
        "工作表 Q3：第 12 行起未读取（超出整个工作簿的单元格预算）",
    ),
    (
        Said("left_out.sheet_columns", {"sheet": "Data", "n": 200}),
        "sheet Data: columns after the first 200 not read",
        "工作表 Data：第 200 列之后的列未读取",
    ),
    (
        Said("left_out.strings", {"n": 10000, "cells": 2}),
        "shared strings after the first 10,000 not read (text budget): 2 cells read as empty",
        "共享字符串只读取了前 10,000 个（超出文字预算）：2 个单元格按空白读取",
    ),
    (
        Said("left_out.strings_one", {"n": 10000, "cells": 1}),
        "shared strings after the first 10,000 not read (text budget): 1 cell read as empty",
        "共享字符串只读取了前 10,000 个（超出文字预算）：1 个单元格按空白读取",
    ),
    (
        Said("left_out.strings_of", {"n": 10000, "total": 200000, "cells": 3}),
        "shared strings after the first 10,000 of 200,000 not read (text budget): 3 cells read as empty",
        "共享字符串只读取了 200,000 个中的前 10,000 个（超出文字预算）：3 个单元格按空白读取",
    ),
    (
        Said("left_out.strings_of_one", {"n": 10000, "total": 200000, "cells": 1}),
        "shared strings after the first 10,000 of 200,000 not read (text budget): 1 cell read as empty",
        "共享字符串只读取了 200,000 个中的前 10,000 个（超出文字预算）：1 个单元格按空白读取",
    ),
    (Said("left_out.rows_after", {"n": 100000}), "rows after the first 100,000", "第 100,000 行之后的行未读取"),
    (Said("left_out.columns_after", {"n": 200}), "columns after the first 200", "第 200 列之后的列未读取"),
    (Said("left_out.navigation", {"blocks": 3}), "navigation (3 blocks)", "导航（3 块）"),
    (Said("left_out.navigation_one", {"blocks": 1}), "navigation (1 block)", "导航（1 块）"),
    (
        Said("library.document_gone"),
        "That document is no longer in the knowledge base.",
        "这份文档已不在知识库中。",
    ),
    (
        Said("library.passage_gone"),
        "That passage is no longer in the knowledge base (its document was deleted).",
        "这个片段已不在知识库中（其文档已被删除）。",
    ),
    (
        Said("library.no_passage", {"id": "d1-0003"}),
        "No passage 'd1-0003' in the knowledge base (its document may have been deleted).",
        "知识库中没有片段 'd1-0003'（其文档可能已被删除）。",
    ),
    (
        Said("ingest.duplicate_hidden", {"name": "a.pdf"}),
        "a.pdf: the same file is already stored, in a knowledge base you may not read; nothing changed. An "
        "administrator can tell you where.",
        "a.pdf：同一文件已存储在你无权读取的知识库中；未作改动。管理员可以告诉你它在哪里。",
    ),
    (
        Said("ingest.repetition", {"name": "a.txt", "chunks": 1200, "distinct": 5000, "allowed": 50}),
        "a.txt: it is mostly repetition: its 1,200 chunks hold 5,000 bytes of distinct text (compressed), enough "
        "for 50 chunks (RAGAPP_INGEST__TEXT_BYTES_PER_CHUNK); nothing was added. Take the repeated part out, or "
        "upload the part that holds the text.",
        "a.txt：内容大多是重复的：它的 1,200 个片段只含 5,000 字节不重复的文字（压缩后），只够 50 个片段"
        "（RAGAPP_INGEST__TEXT_BYTES_PER_CHUNK）；未加入任何内容。请删去重复的部分，或只上传含有文字的部分。",
    ),
    (
        Said("ingest.flood_elements", {"name": "x.docx", "limit": 2_000_000}),
        "x.docx: it holds more than 2,000,000 XML elements, as no real document does: it is built to flood the "
        "reader (it is not corrupt); nothing was added.",
        "x.docx：其 XML 含有超过 2,000,000 个元素，真实的文档不会这样：这是为拖垮解析器而构造的文件（并未损坏）；"
        "未加入任何内容。",
    ),
    (
        Said("ingest.flood_depth", {"name": "x.docx"}),
        "x.docx: it nests its XML deeper than 256 levels, as no real document does: it is built to flood the "
        "reader (it is not corrupt); nothing was added.",
        "x.docx：其 XML 嵌套超过 256 层，真实的文档不会这样：这是为拖垮解析器而构造的文件（并未损坏）；"
        "未加入任何内容。",
    ),
    (
        Said("ingest.flood_text", {"name": "x.docx"}),
        "x.docx: it holds one run of text over 10 MB, as no real document does: it is built to flood the reader "
        "(it is not corrupt); nothing was added.",
        "x.docx：其中一段文字超过 10 MB，真实的文档不会这样：这是为拖垮解析器而构造的文件（并未损坏）；"
        "未加入任何内容。",
    ),
    (
        Said("enrich.progress", {"kb": "manuals", "step": "vectors", "done": 120, "total": 340, "pace": 14.2}),
        "manuals: vectors for 120 of 340 passages, 14 a minute.",
        "manuals：向量已完成 120/340 段，每分钟 14 段。",
    ),
    (
        Said("enrich.still_indexing", {"kbs": ["manuals", "faq"]}),
        "Still being indexed: manuals and faq. Passages not yet indexed are found by their words only, so this "
        "answer may miss some.",
        "仍在建立索引：manuals、faq。尚未建立索引的段落只能按字词找到，所以这个回答可能有遗漏。",
    ),
]


def _fields(template: str) -> set[str]:
    return {name.split(".")[0].split("[")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_entry_has_both_languages_over_the_same_values(code: str) -> None:
    english, chinese = CATALOGUE[code]
    assert english.strip() and chinese.strip() and _HAN.search(chinese) and not _HAN.search(english)
    assert _fields(english) == _fields(chinese)


def test_the_tables_share_no_code_and_every_term_has_both_languages() -> None:
    tables = (SEARCH, ANSWER, INGEST, INTENTS, ADMIN, WEB, ENRICH)
    assert len(CATALOGUE) == sum(len(table) for table in tables)
    for words in TERMS.values():
        assert all(e.strip() and _HAN.search(z) for e, z in words.values())


def _engine_codes() -> tuple[set[str], list[str]]:
    """The codes the engine's source names (string constants shaped like a catalogue code), and the places that
    build a ``Said`` from a code that is not a constant (which this test could not check)."""
    codes: set[str] = set()
    dynamic: list[str] = []
    for path in ROOT.rglob("*.py"):
        if path.name.startswith("said_") and path.parent.name == "core":
            continue  # the catalogue itself
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # The engine's own records (the UI only reads stored ones back; confidence_words has a Said of its own)
        ours = path.parent.name != "ui" and any(
            isinstance(n, ast.ImportFrom) and n.module in _SAID_HOMES and any(a.name == "Said" for a in n.names)
            for n in ast.walk(tree)
        )
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CODE.fullmatch(node.value):
                codes.add(node.value)
            elif ours and isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Said" and node.args:
                built = isinstance(node.args[0], ast.JoinedStr | ast.BinOp | ast.Call)  # a code made of pieces
                dynamic += [f"{path.relative_to(ROOT)}:{node.lineno}"] if built else []
    return {c for c in codes if c.split(".")[0] in _PREFIXES}, dynamic


def test_every_code_the_engine_writes_is_in_the_catalogue_and_every_entry_is_used() -> None:
    codes, dynamic = _engine_codes()
    assert not dynamic, f"name each code as a constant, so that this test can check it: {dynamic}"
    assert codes - set(CATALOGUE) == set(), "add these codes to the catalogue, in English and Chinese"
    assert set(CATALOGUE) - codes == set(), "no part of the engine says these any more: remove them"


_SAMPLES: dict[str, object] = {
    "action": "manage users", "what": "demote", "s": 5.0, "min": 0.2, "margin": 0.1, "score": 0.5, "lead": 0.01,
    "size": 60.0, "mb": 9.5, "limit": 50, "n": 3, "most": 8, "channels": ["vector", "keyword"], "share": 0.5,
    "pace": 14.0,
}  # fmt: skip


@pytest.mark.parametrize("code", sorted(CATALOGUE))
def test_every_entry_is_worded_in_both_languages_with_its_values(code: str) -> None:
    english, _ = CATALOGUE[code]
    counts = {"rank", "first", "last", "of", "top_k", "a", "b", "width", "height", "parts", "most_parts", "most_mb"}
    said = Said(code, {name: _SAMPLES.get(name, 7 if name in counts else "x") for name in _fields(english)})
    page = said_text(said)
    assert page is not None, code
    assert "{" not in shown(page, "en") + shown(page, "zh") and _HAN.search(shown(page, "zh"))


def test_the_examples_are_entries_of_the_catalogue() -> None:
    assert {said.code for said, _, _ in EXAMPLES} <= set(CATALOGUE)


@pytest.mark.parametrize(("said", "english", "chinese"), EXAMPLES, ids=[s.code for s, _, _ in EXAMPLES])
def test_each_entry_is_worded_in_english_for_the_api_and_in_both_on_the_page(
    said: Said, english: str, chinese: str
) -> None:
    assert said.english == english
    page = said_text(said)
    assert page is not None and unescape(shown(page, "en")) == english and unescape(shown(page, "zh")) == chinese


def test_a_reason_of_several_parts_is_worded_part_after_part() -> None:
    parts = (Said("routing.routed", {"paths": "A (0.90)"}), Said("routing.no_model_call", {"reply": "embedder"}))
    assert english_of(parts) == "routed to A (0.90) (no model call: embedder)"
    page = said_or_english(parts, "old words")
    assert shown(page, "zh") == "路由到 A (0.90)（未调用模型：embedder）"
    assert said_or_english((), "routed to A (0.90)") == "routed to A (0.90)"


def test_names_are_escaped_on_the_page_and_kept_as_they_are_in_english() -> None:
    said = Said("relevance.remote", {"channel": "<b>hr</b>"})
    assert said.english == "kept by <b>hr</b>'s own relevance gate"
    assert "&lt;b&gt;hr&lt;/b&gt;" in (said_text(said) or "") and "<b>" not in (said_text(said) or "")


def test_a_record_this_version_cannot_word_shows_the_english_stored_beside_it() -> None:
    assert said_or_english(Said("future.code", {"n": 1}), "something new <b>") == "something new &lt;b&gt;"
    assert said_or_english(None, "an old trace's words") == "an old trace's words"
    assert said_or_english(Said("relevance.rerank_below"), "rerank score below 0.2") == "rerank score below 0.2"


def test_an_upload_refused_by_the_engine_is_worded_on_the_page_and_kept_in_english_for_the_api(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "report.pdf"
    empty.write_bytes(b"")
    with pytest.raises(IngestError) as refused:
        parse_file(empty)
    assert str(refused.value) == "report.pdf: the file is empty."  # the HTTP API's and the log's words
    result = IngestResult("report.pdf", "failed", str(refused.value), said=refused.value.said)
    assert shown(ingest_line(result), "zh") == "report.pdf：文件是空的。"
    assert shown(ingest_line(IngestResult("a.pdf", "failed", "an old <b>reason</b>")), "zh") == (
        "an old &lt;b&gt;reason&lt;/b&gt;"
    )


def test_what_a_parser_left_out_reads_in_both_languages_in_the_documents_view() -> None:
    record = DocumentRecord("d", "wide.xlsx", "xlsx", "h", 2_000_000, 1, 42, "2026-12-03T07:00:00Z")
    cut = Said("left_out.sheet_rows", {"sheet": "Data", "first": 4998, "last": 100000, "budget": "character"})
    report = ParseReport.from_dict(ParseReport().leaving_out(cut).to_dict())  # as stored with the document
    line = quality_line(DocumentView(record, report, (), (), file_kept=True))
    assert "sheet Data: rows 4,998–100,000 not read (character budget)" in unescape(shown(line, "en"))
    assert "工作表 Data：第 4,998–100,000 行未读取（超出字符预算）" in unescape(shown(line, "zh"))
    stored_before = ParseReport(left_out=("navigation (2 blocks)",))  # no records: the English as it is
    old = quality_line(DocumentView(record, stored_before, (), (), file_kept=True))
    assert "未编入: navigation (2 blocks)" in unescape(shown(old, "zh"))


def test_a_role_refused_an_action_is_told_so_in_the_pages_language() -> None:
    with pytest.raises(AccessDenied) as refused:
        require(Actor("bob", "reader"), Action.MANAGE_USERS)
    assert str(refused.value) == "Your role (reader) may not manage users; ask an administrator."
    page = said_or_english(refused.value.said, str(refused.value))
    assert shown(page, "zh") == "你的角色（读者）不能管理用户；请联系管理员。"


def test_an_uploads_notes_read_in_the_pages_language() -> None:
    """The boilerplate left out and a low coverage, after an upload's chunk count: Chinese on a Chinese page
    (they were the engine's English on both before), English kept for the API's message."""
    left_out = Said(
        "note.boilerplate_pages", {"count": 3, "reasons": ["table of contents", "index", "licence text (GNU FDL)"]}
    )
    low = ParseReport(coverage=0.5, unread=("a", "b"), unread_count=5).coverage_said()
    assert low is not None
    result = IngestResult("m.pdf", "added", "m.pdf: added", "d", 12, "default", (left_out, low))
    line = unescape(ingest_line(result))
    assert shown(line, "en") == (
        "m.pdf: added to 'default' (12 chunks; 3 pages left out: table of contents, index and licence text "
        "(GNU FDL); ⚠️ only 50% of its text was indexed; not read: “a”, “b” and 3 more passages)."
    )
    assert shown(line, "zh") == (
        "m.pdf: 已加入“default”（12 个片段；3 页未编入：目录、索引、许可证文本（GNU FDL）；"
        "⚠️ 只有 50% 的文字编入了索引；未读取：“a”, “b” 等另外 3 段）。"
    )


def test_every_licence_the_boilerplate_rules_know_has_words_in_chinese() -> None:
    from ragapp.ingest.boilerplate import _LICENCES, BoilerplateSplit

    reasons = TERMS["reasons"]
    assert {f"licence text ({family})" for family, _ in _LICENCES} <= set(reasons)
    doc_note = BoilerplateSplit(doc=None, all_boilerplate=("licence text (MIT)",)).note  # type: ignore[arg-type]
    assert doc_note is not None and doc_note.worded(True) == "每一部分看起来都像许可证文本（MIT），因此仍全部编入"


def test_a_failed_steps_bubble_reads_in_the_pages_language() -> None:
    """A step of the answer that failed showed the engine's English error in its bubble on a Chinese page."""
    from ragapp.core.events import StageEvent
    from ragapp.core.turn import Turn
    from ragapp.ui.step_views import stage_message

    turn = Turn("q")
    wrong = Said("stage.wrong_language", {"language": "zh"})
    turn.apply(StageEvent("translate", "started"))
    turn.apply(StageEvent("translate", "failed", 0.5, {}, wrong.english, wrong))
    (step,) = turn.stages
    content = str(stage_message(step).content)
    assert wrong.english == "the translation is not in Chinese"
    assert shown(content, "en") == "the translation is not in Chinese" and shown(content, "zh") == "译文不是中文"
    stored = Turn.from_dict(turn.to_dict()).stages[0]  # a conversation read back words it the same
    assert stored.said == wrong
