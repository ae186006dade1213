"""The catalogue's words for ingesting a file (``ragapp.core.said``): refusals and what a parser left out."""

from __future__ import annotations

# code: (English, Chinese)
INGEST: dict[str, tuple[str, str]] = {
    # A file refused or left alone (ragapp.ingest), each after the file's name
    "ingest.binary": (
        "{name}: this looks like a binary file, not text; nothing was added.",
        "{name}：这看起来是二进制文件，不是文本；未加入任何内容。",
    ),
    "ingest.pdf_password": (
        "{name}: the PDF is password-protected; remove the password and upload it again.",
        "{name}：该 PDF 有密码保护；请去掉密码后重新上传。",
    ),
    "ingest.unsupported": (
        "{name}: files of type '{ext}' are not supported. Use {known}.",
        "{name}：不支持“{ext}”类型的文件。请使用 {known}。",
    ),
    "ingest.empty": ("{name}: the file is empty.", "{name}：文件是空的。"),
    "ingest.unreadable": (
        "{name}: could not read this {ext} file; it may be corrupt or password-protected ({error}).",
        "{name}：无法读取这个 {ext} 文件，它可能已损坏或有密码保护（{error}）。",
    ),
    "ingest.no_text": ("{name}: no text found.", "{name}：没有找到文字。"),
    "ingest.no_text_read": (
        "{name}: no text found. The pages hold no text a reader or OCR could find (blank, or images too faint to "
        "read).",
        "{name}：没有找到文字：页面上没有可读取或可经 OCR 识别的文字（空白页，或图像太模糊）。",
    ),
    "ingest.no_text_ocr_off": (
        "{name}: no text found. Scanned pages and images are read by OCR, which is off (RAGAPP_INGEST__OCR=true "
        "turns it on).",
        "{name}：没有找到文字。扫描页和图像要靠 OCR 读取，而 OCR 已关闭（RAGAPP_INGEST__OCR=true 可开启）。",
    ),
    "ingest.already_there": (
        "{name}: already in the knowledge base as {doc} in '{kb}'; nothing changed.",
        "{name}：已在知识库中（“{kb}”中的 {doc}），未作改动。",
    ),
    "ingest.lost_race": (
        "{name}: another upload of this file was stored first; nothing changed.",
        "{name}：同一文件的另一次上传已先保存；未作改动。",
    ),
    "ingest.too_large": (
        "{name}: {size:.1f} MB is over the {limit:g} MB limit (RAGAPP_INGEST__MAX_FILE_MB).",
        "{name}：{size:.1f} MB 超过了 {limit:g} MB 的上限（RAGAPP_INGEST__MAX_FILE_MB）。",
    ),
    "ingest.too_many_chunks": (
        "{name}: it makes {count} chunks, over the {limit} a document may have (RAGAPP_INGEST__MAX_CHUNKS); split "
        "it into smaller files. Nothing was added.",
        "{name}：它会切出 {count} 个片段，超过了每份文档 {limit} 个的上限（RAGAPP_INGEST__MAX_CHUNKS）；"
        "请拆成较小的文件。未加入任何内容。",
    ),
    "ingest.too_many_chunks_least": (
        "{name}: it makes at least {count} chunks, over the {limit} a document may have "
        "(RAGAPP_INGEST__MAX_CHUNKS); split it into smaller files. Nothing was added.",
        "{name}：它会切出至少 {count} 个片段，超过了每份文档 {limit} 个的上限（RAGAPP_INGEST__MAX_CHUNKS）；"
        "请拆成较小的文件。未加入任何内容。",
    ),
    "ingest.kb_name": (  # the rule of ragapp.ingest.names._KB_NAME
        "Knowledge base name {name!r} is not allowed: use 1 to 64 characters, each a letter (any language, "
        "Chinese included), a digit, a space, or one of - _ . (for example 'manuals-2024').",
        "知识库名称 {name!r} 不可用：请使用 1 到 64 个字符，每个字符是字母（任何语言，包括中文）、数字、空格，"
        "或 - _ . 之一（例如 'manuals-2024'）。",
    ),
    "ingest.csv_unreadable": (
        "{name}: this CSV file could not be read ({error}).",
        "{name}：无法读取这个 CSV 文件（{error}）。",
    ),
    "ingest.not_zip": (
        "{name}: this is not a valid {kind} file (not a zip).",
        "{name}：这不是有效的 {kind} 文件（不是 zip 压缩包）。",
    ),
    "ingest.zip_limits": (
        "{name}: it unpacks into {parts} parts and {mb:,.0f} MB, over the limits ({most_parts} parts, "
        "{most_mb:d} MB); nothing was added.",
        "{name}：它解压后有 {parts} 个部分、{mb:,.0f} MB，超过了上限（{most_parts} 个部分、{most_mb:d} MB）；"
        "未加入任何内容。",
    ),
    "ingest.image_ocr_off": (
        "{name}: images are read by OCR, which is off (RAGAPP_INGEST__OCR=true turns it on).",
        "{name}：图像要靠 OCR 读取，而 OCR 已关闭（RAGAPP_INGEST__OCR=true 可开启）。",
    ),
    "ingest.image_too_big": (
        "{name}: {width:d}×{height:d} pixels is over the {most:d} megapixel limit; scale it down and upload it again.",
        "{name}：{width:d}×{height:d} 像素超过了 {most:d} 百万像素的上限；请缩小后重新上传。",
    ),
    "ingest.image_bomb": (
        "{name}: the image has far more pixels than the {most:d} megapixel limit; scale it down and upload it again.",
        "{name}：图像的像素远超 {most:d} 百万像素的上限；请缩小后重新上传。",
    ),
    "ingest.image_unreadable": (
        "{name}: this is not an image that can be read ({error}).",
        "{name}：这不是可以读取的图像（{error}）。",
    ),
    "ingest.epub_package": (
        "{name}: this EPUB has no readable package file (META-INF/container.xml).",
        "{name}：这个 EPUB 没有可读取的包文件（META-INF/container.xml）。",
    ),
    "ingest.file_not_kept": (
        "{name}: its file was not kept (it was added before files were), upload it again.",
        "{name}：它的文件没有保存（它是在保存文件之前加入的），请重新上传。",
    ),
    "ingest.vectors_refused": (
        "{name}: not stored, the vector store refused the vectors ({error}); the knowledge base is as it was. "
        "Check that the Chroma server is running, then try again.",
        "{name}：未保存，向量库拒收了向量（{error}）；知识库保持原样。请检查 Chroma 服务器是否在运行，然后重试。",
    ),
    "library.name_taken": (
        "'{kb}' already holds a document named {name}; delete or rename one first.",
        "“{kb}”中已有名为 {name} 的文档；请先删除或重命名其中一个。",
    ),
    # What a parser left out on purpose, by rule (a document's report, ``ParseReport.left_out``)
    "left_out.sheet_rows_after": (
        "sheet {sheet}: rows after the first {n:,.0f} not read",
        "工作表 {sheet}：第 {n:,.0f} 行之后的行未读取",
    ),
    "left_out.sheet_rows": (
        "sheet {sheet}: rows {first}–{last} not read ({budget} budget)",
        "工作表 {sheet}：第 {first}–{last} 行未读取（超出{budget}预算）",
    ),
    "left_out.sheet_rows_on": (
        "sheet {sheet}: rows from {first} on not read ({budget} budget)",
        "工作表 {sheet}：第 {first} 行起未读取（超出{budget}预算）",
    ),
    "left_out.book_rows": (
        "sheet {sheet}: rows {first}–{last} not read (the workbook's {budget} budget)",
        "工作表 {sheet}：第 {first}–{last} 行未读取（超出整个工作簿的{budget}预算）",
    ),
    "left_out.book_rows_on": (
        "sheet {sheet}: rows from {first} on not read (the workbook's {budget} budget)",
        "工作表 {sheet}：第 {first} 行起未读取（超出整个工作簿的{budget}预算）",
    ),
    "left_out.sheet_columns": (
        "sheet {sheet}: columns after the first {n} not read",
        "工作表 {sheet}：第 {n} 列之后的列未读取",
    ),
    "left_out.strings": (
        "shared strings after the first {n} not read (text budget): {cells} cells read as empty",
        "共享字符串只读取了前 {n} 个（超出文字预算）：{cells} 个单元格按空白读取",
    ),
    "left_out.strings_one": (
        "shared strings after the first {n} not read (text budget): {cells} cell read as empty",
        "共享字符串只读取了前 {n} 个（超出文字预算）：{cells} 个单元格按空白读取",
    ),
    "left_out.strings_of": (
        "shared strings after the first {n} of {total} not read (text budget): {cells} cells read as empty",
        "共享字符串只读取了 {total} 个中的前 {n} 个（超出文字预算）：{cells} 个单元格按空白读取",
    ),
    "left_out.strings_of_one": (
        "shared strings after the first {n} of {total} not read (text budget): {cells} cell read as empty",
        "共享字符串只读取了 {total} 个中的前 {n} 个（超出文字预算）：{cells} 个单元格按空白读取",
    ),
    "left_out.rows_after": ("rows after the first {n}", "第 {n} 行之后的行未读取"),  # a CSV file's
    "left_out.columns_after": ("columns after the first {n}", "第 {n} 列之后的列未读取"),
    "left_out.navigation": ("navigation ({blocks} blocks)", "导航（{blocks} 块）"),
    "left_out.navigation_one": ("navigation ({blocks} block)", "导航（{blocks} 块）"),
    "left_out.header": ("header ({blocks} blocks)", "页眉（{blocks} 块）"),
    "left_out.header_one": ("header ({blocks} block)", "页眉（{blocks} 块）"),
    "left_out.footer": ("footer ({blocks} blocks)", "页脚（{blocks} 块）"),
    "left_out.footer_one": ("footer ({blocks} block)", "页脚（{blocks} 块）"),
    "left_out.search": ("search form ({blocks} blocks)", "搜索框（{blocks} 块）"),
    "left_out.search_one": ("search form ({blocks} block)", "搜索框（{blocks} 块）"),
    "left_out.outside_main": ("outside the page's main content", "页面主要内容之外的部分"),
    "left_out.decoration": (
        "{count} pictures as decoration (small, thin, or repeated on many pages)",
        "{count} 张装饰性图片（过小、过窄或在多页重复）",
    ),
    "left_out.broken_pictures": (
        "{count} pictures that would not open (corrupt, missing, or of a kind not read)",
        "{count} 张无法打开的图片（已损坏、缺失或格式无法读取）",
    ),
    # What else an upload's line says after its chunk count (ragapp.ingest.boilerplate, ParseReport)
    "note.boilerplate_pages": ("{count} pages left out: {reasons}", "{count} 页未编入：{reasons}"),
    "note.boilerplate_page": ("{count} page left out: {reasons}", "{count} 页未编入：{reasons}"),
    "note.boilerplate_sections": ("{count} sections left out: {reasons}", "{count} 节未编入：{reasons}"),
    "note.boilerplate_section": ("{count} section left out: {reasons}", "{count} 节未编入：{reasons}"),
    "note.all_boilerplate": (
        "every part looked like {reasons}, so it was indexed anyway",
        "每一部分看起来都像{reasons}，因此仍全部编入",
    ),
    "note.coverage_low": ("⚠️ only {share:.0%} of its text was indexed", "⚠️ 只有 {share:.0%} 的文字编入了索引"),
    "note.coverage_low_unread": (
        "⚠️ only {share:.0%} of its text was indexed; not read: {unread}",
        "⚠️ 只有 {share:.0%} 的文字编入了索引；未读取：{unread}",
    ),
    "note.coverage_low_unread_more": (
        "⚠️ only {share:.0%} of its text was indexed; not read: {unread} and {more} more passages",
        "⚠️ 只有 {share:.0%} 的文字编入了索引；未读取：{unread} 等另外 {more} 段",
    ),
    "note.coverage_low_unread_more_one": (
        "⚠️ only {share:.0%} of its text was indexed; not read: {unread} and {more} more passage",
        "⚠️ 只有 {share:.0%} 的文字编入了索引；未读取：{unread} 等另外 {more} 段",
    ),
    # A document or passage asked for that is not there (or lies where the asker may not read)
    "library.document_gone": ("That document is no longer in the knowledge base.", "这份文档已不在知识库中。"),
    "library.passage_gone": (
        "That passage is no longer in the knowledge base (its document was deleted).",
        "这个片段已不在知识库中（其文档已被删除）。",
    ),
    "library.no_figure": (
        "Passage {id!r} is no figure of a kept PDF or PowerPoint file: there is no picture to show.",
        "片段 {id!r} 不是已保存的 PDF 或演示文稿中的图：没有可显示的图片。",
    ),
    "library.no_passage": (
        "No passage {id!r} in the knowledge base (its document may have been deleted).",
        "知识库中没有片段 {id!r}（其文档可能已被删除）。",
    ),
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
    # A document's tag that breaks the rules (ragapp.core.filters)
    "tag.empty": ("A tag may not be empty.", "标签不能为空。"),
    "tag.too_long": (
        "The tag {tag!r}… is over {most} characters; shorten it.",
        "标签 {tag!r}… 超过了 {most} 个字符；请缩短。",
    ),
    "tag.bad_character": (
        "The tag {tag!r} holds a character tags may not: use letters, digits, spaces and . : / + # & - only.",
        "标签 {tag!r} 含有不允许的字符：只能用字母、数字、空格和 . : / + # & -。",
    ),
    "tag.too_many": (
        "{n} tags: a document may have at most {most}; remove some.",
        "{n} 个标签：一份文档最多只能有 {most} 个；请删掉一些。",
    ),
}
# value name: {value: (English, Chinese)}
INGEST_TERMS: dict[str, dict[str, tuple[str, str]]] = {
    "budget": {"cell": ("cell", "单元格"), "character": ("character", "字符")},  # a sheet's budget that ran out
    # Why a page was left out as boilerplate (ragapp.ingest.boilerplate.boilerplate_reason), the licence families
    # of its _LICENCES: tests/unit/test_said.py checks every family has words here.
    "reasons": {
        "table of contents": ("table of contents", "目录"),
        "index": ("index", "索引"),
        **{
            f"licence text ({family})": (f"licence text ({family})", f"许可证文本（{family}）")
            for family in ("GNU FDL", "GNU LGPL", "GNU GPL", "Creative Commons", "MIT", "Apache")
        },
    },
}
