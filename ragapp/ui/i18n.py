"""The page's words in English and Chinese, translated in the browser by Gradio's ``gr.I18n``.

Gradio's frontend picks the language from the browser (``navigator.language``: zh-CN and zh-TW read the ``zh``
texts, every other language the ``en`` ones) and translates each label, placeholder, info, button, tab,
accordion, choice and Markdown text that holds a key made by ``t(key)``. ``page_language.HEAD`` (mounted with
the page) adds the header's switch: a click on English or 中文 changes the page's language at once and the
browser remembers it; ``?lang=en``, ``?lang=zh`` or ``?lang=auto`` (back to the browser's language) in the
address do the same.

What handlers compute at run time (toasts, errors, reports, the chat's step bubbles) is made on the server,
which does not know the page's language: it carries both (``both``) and a style in ``HEAD`` shows the page's.
Gradio translates no table header either: tables name their columns in English and the script in ``HEAD``
renames them (``page_language.HEADERS``). See docs/chats.md, "The page's language".
"""

from __future__ import annotations

import gradio as gr
from gradio.i18n import I18nData

# Gradio translates any displayed string that equals a key: the prefix keeps the keys apart from what users type.
PREFIX = "ragapp."

# key: (English, Chinese). The English words are the ones the browser tests look for.
TEXTS: dict[str, tuple[str, str]] = {
    # The header and the sidebar of chats
    "header.tagline": ("Ask questions about your documents", "就你的文档提问"),
    "header.purpose": (
        "Answers come from your documents only, each with the passages it rests on; "
        "when the documents do not say, it tells you so.",
        "回答只来自你的文档，并附上所依据的原文；文档里没有的，会直接告诉你。",
    ),
    "header.about": ("About this app", "关于本应用"),
    "header.accounts_off": (
        "👤 Accounts are off: one local user may do everything (`RAGAPP_AUTH__ENABLED=true` turns them on)",
        "👤 未启用账户：本地单用户拥有全部权限（`RAGAPP_AUTH__ENABLED=true` 可启用账户）",
    ),
    "header.ephemeral": (
        "⚠️ Nothing here is kept: uploaded documents, chats and traces are lost when the app restarts (it has no "
        "persistent storage).",
        "⚠️ 此处不保存任何内容：应用重启后，上传的文档、对话和追踪记录都会丢失（没有持久存储）。",
    ),
    "chats.sidebar": ("Chats", "会话"),
    "memory.title": ("🧠 Memory", "🧠 记忆"),
    "memory.use": ("Use memory for me", "为我启用记忆"),
    "memory.use_info": (
        "What you ask me to remember is recalled when relevant, in every chat",
        "你让我记住的内容会在相关时用于所有对话",
    ),
    "memory.list": ("What I remember about you", "我记住的关于你的内容"),
    "memory.text": ("Memory", "记忆内容"),
    "memory.text_placeholder": ("e.g. I use the V2 Pro", "例如：我用的是 V2 Pro"),
    "memory.save": ("Save", "保存"),
    "memory.add": ("Add", "添加"),
    "memory.refresh": ("Refresh", "刷新"),
    "chats.open": ("🗂️ Past chats", "🗂️ 历史对话"),
    "chats.new": ("➕ New chat", "➕ 新对话"),
    "chats.past": ("Past chats", "历史对话"),
    "chats.title": ("New title", "新标题"),
    "chats.rename": ("Rename", "重命名"),
    "chats.export_as": ("Export as", "导出格式"),
    "chats.export_markdown": ("Markdown (to read)", "Markdown（阅读用）"),
    "chats.export_json": ("JSON (for programs)", "JSON（程序用）"),
    "chats.export": ("📤 Export this chat", "📤 导出此对话"),
    "chats.export_all": ("📦 Export all (zip)", "📦 全部导出（ZIP 压缩包）"),
    "chats.export_file": ("Download", "下载"),
    "common.delete": ("Delete", "删除"),
    # The Chat tab
    "chat.tab": ("Chat", "对话"),
    "chat.chatbot": ("Chat", "对话"),
    "chat.placeholder": ("Ask about the documents in the knowledge base.", "请输入关于知识库文档的问题。"),
    "chat.feedback_placeholder": ("What was wrong with this answer? (optional)", "这个回答哪里不对？（可选）"),
    "chat.feedback_send": ("Send feedback", "提交反馈"),
    "chat.save_case": ("Save as test case", "存为测试用例"),
    "chat.question": ("Type a question and press Enter", "输入问题后按回车"),
    "chat.send": ("Send", "发送"),
    "chat.clear": ("New chat", "新对话"),
    "chat.scope": ("Search in", "检索范围"),
    "chat.scope_info": ("Knowledge bases to search; none picked searches them all", "不选则检索全部知识库"),
    "chat.filter": ("Filter documents", "筛选文档"),
    "chat.filter_tags": ("Tags", "标签"),
    "chat.filter_tags_info": ("Documents with any of these tags", "带有其中任一标签的文档"),
    "chat.filter_path": ("Path starts with", "路径开头"),
    "chat.filter_path_info": (
        "e.g. policies/2024/ (an upload's path is its name)",
        "例如 policies/2024/（上传文件的路径即其文件名）",
    ),
    "chat.filter_types": ("File types", "文件类型"),
    "chat.filter_types_info": ("None picked: every type", "不选则包括全部类型"),
    "chat.mode": ("Mode", "模式"),
    "chat.mode_info": (
        "Workflow: one search, then the answer (fast). Agent: the model searches step by step (slower; for "
        "comparisons and multi-part questions). Auto: picks one per question",
        "工作流：检索一次后作答（快）；智能体：模型逐步调用工具检索（较慢，适合比较和多步问题）；自动：按问题选择",
    ),
    "mode.workflow": ("Workflow", "工作流"),
    "mode.agent": ("Agent", "智能体"),
    "mode.auto": ("Auto", "自动"),
    "chat.examples": ("Examples", "示例问题"),
    "chat.kb_questions": ("Your documents can answer", "你的文档可以回答"),
    # The Knowledge tab
    "kb.tab": ("Knowledge", "知识库"),
    "kb.choice": ("Knowledge base", "知识库"),
    "kb.choice_info": ("Where the files go; type a new name to create one", "文件存入的知识库，输入新名称即可新建"),
    "kb.upload": ("Drop files here", "拖入文件"),
    "kb.add": ("Add to knowledge base", "加入知识库"),
    "kb.documents": ("Documents", "文档"),
    "kb.left_out": ("Left out of the index", "未编入索引的页面"),
    "kb.to_delete": ("Document to delete", "要删除的文档"),
    "kb.stop": ("Stop upload", "停止上传"),
    "kb.enrich_kb": ("Knowledge base being indexed", "正在索引的知识库"),
    "kb.enrich_pause": ("⏸ Pause indexing", "⏸ 暂停索引"),
    "kb.enrich_resume": ("▶ Resume indexing", "▶ 继续索引"),
    "kb.reindex": ("Index again", "重新索引"),
    "kb.delete_doc": ("🗑️ Delete this document", "🗑️ 删除此文档"),
    "kb.delete_confirm": (
        "Delete this document from the knowledge base, with its chunks? This cannot be undone.",
        "从知识库中删除此文档及其全部分块？删除后无法恢复。",
    ),
    "kb.delete_yes": ("Yes, delete it", "确定删除"),
    "kb.delete_no": ("Cancel", "取消"),
    "kb.doc_hint": (
        "Click a document in the table to see how it was read and what it was cut into.",
        "点击表格中的文档，查看它的解析情况和切分出的片段。",
    ),
    "kb.doc_tags": ("Tags", "标签"),
    "kb.doc_tags_info": (
        "Comma separated; the Chat's filter finds documents by them (letters, digits, spaces, . : / + # & -)",
        "用逗号分隔；对话中的筛选可按标签查找文档（字母、数字、空格及 . : / + # & -）",
    ),
    "kb.doc_tags_save": ("Save tags", "保存标签"),
    "kb.doc_search": ("Find in this document's chunks", "在该文档的片段中查找"),
    "kb.doc_chunks": ("Chunks", "片段"),
    "kb.add_leaf": ("Add an intent for this knowledge base", "为这个知识库添加意图"),
    # The Knowledge tab: followed folders, git repositories and websites
    "sync.title": ("🔁 Followed folders, git repositories and websites", "🔁 跟随的文件夹、Git 仓库与网站"),
    "sync.hint": (
        "A knowledge base can follow a folder of the server, a git repository or a website: the first sync indexes "
        "every file or page, later ones only what changed (on a schedule, and when a folder's files change).",
        "知识库可以跟随服务器上的文件夹、Git 仓库或网站：首次同步编入全部文件或网页，"
        "之后只处理有变化的部分（按计划同步，文件夹的文件变化时也会同步）。",
    ),
    "sync.sources": ("Sources", "同步源"),
    "sync.pick": ("Source", "同步源"),
    "sync.now": ("Sync now", "立即同步"),
    "sync.pause": ("Pause", "暂停"),
    "sync.resume": ("Resume", "恢复"),
    "sync.add_title": (
        "**Follow a folder, a repository or a website** (admins)",
        "**跟随文件夹、仓库或网站**（仅管理员）",
    ),
    "sync.name": ("Name", "名称"),
    "sync.kind": ("Kind", "类型"),
    "sync.kind_folder": ("Folder", "文件夹"),
    "sync.kind_git": ("Git repository", "Git 仓库"),
    "sync.kind_web": ("Website", "网站"),
    "sync.location": ("Folder, repository or website", "文件夹、仓库或网站"),
    "sync.location_info": (
        "A folder's absolute path on the server, a repository's path or URL, or a website's start page or sitemap "
        "(the pages under its folder are followed)",
        "服务器上文件夹的绝对路径、仓库的路径或 URL，或网站的起始页或站点地图（跟随其所在目录下的网页）",
    ),
    "sync.include": ("Include (globs, comma-separated)", "包含（通配符，逗号分隔）"),
    "sync.exclude": ("Exclude (globs, comma-separated)", "排除（通配符，逗号分隔）"),
    "sync.branch": ("Branch (git; empty: the default)", "分支（Git；留空为默认分支）"),
    "sync.add": ("Follow it", "开始跟随"),
    "cite.close": ("Close", "关闭"),
    "cite.sources": ("Sources of this answer", "本回答的出处"),
    "cite.page": ("The cited page", "引用的页面"),
    # The Intents tab
    "intents.tab": ("Intents", "意图"),
    "intents.intro": (
        "Questions are routed by this tree: **groups** organise it, **KB** leaves search their knowledge bases, "
        "**SYSTEM** leaves reply directly (greetings, who-are-you). Pick an intent to edit it, or *New intent* to "
        "add one.",
        "问题按此意图树路由：**分组**用于组织，**KB** 叶子检索其知识库，**SYSTEM** 叶子直接回复（问候、自我介绍）。"
        "选择意图进行编辑，或*新建意图*。",
    ),
    "intents.tree": ("Intent tree", "意图树"),
    "intents.edit": ("### ✏️ Edit", "### ✏️ 编辑"),
    "intents.pick": ("Intent", "意图"),
    "intents.pick_info": ("Pick an intent to edit, or ➕ New intent to add one", "选择要编辑的意图，或新建意图"),
    "intents.new": ("➕ New intent", "➕ 新建意图"),
    "intents.top": ("(top level)", "（顶层）"),
    "intents.code": ("Code", "代码"),
    "intents.code_info": (
        "Unique id: lowercase letters, digits, '_', '.', '-'",
        "唯一编号：小写字母、数字、'_'、'.'、'-'",
    ),
    "intents.parent": ("Parent", "上级"),
    "intents.parent_info": ("Changing it moves the intent (and what is under it)", "修改即移动该意图（及其下级）"),
    "intents.name": ("Name", "名称"),
    "intents.name_placeholder": ("Accessories", "配件"),
    "intents.description": ("Description", "描述"),
    "intents.description_info": (
        "What questions belong here: the classifier reads it",
        "哪些问题属于这里：分类模型会阅读此描述",
    ),
    "intents.examples": ("Example questions, one per line", "示例问题（每行一个）"),
    "intents.kind": ("Kind", "类型"),
    "intents.kind_info": ("A node with child intents is a group", "有子意图的节点是分组"),
    "intents.kind_group": ("Group (has child intents)", "分组（含子意图）"),
    "intents.kind_kb": ("KB (search knowledge bases)", "KB（检索知识库）"),
    "intents.kind_system": ("SYSTEM (reply directly)", "SYSTEM（直接回复）"),
    "intents.kbs": ("Knowledge bases", "知识库"),
    "intents.kbs_info": ("Searched for this intent", "该意图检索的知识库"),
    "intents.top_k_info": ("Chunks in the prompt; 0 or empty = the default", "放入提示的片段数；0 或留空为默认"),
    "intents.prompt": ("Extra answer instructions", "额外回答指令"),
    "intents.prompt_system": ("Reply instructions", "回复指令"),
    "intents.prompt_info": ("Optional; for SYSTEM leaves, how to reply", "可选；SYSTEM 意图为回复指令"),
    "intents.save": ("Save", "保存"),
    "intents.delete_note": ("Deleting a group deletes everything under it", "删除分组会同时删除其下所有意图"),
    "intents.io": ("### 📦 Import / export", "### 📦 导入 / 导出"),
    "intents.file": ("Intent tree file (.yaml, .yml, .json)", "意图树文件（.yaml、.yml、.json）"),
    "intents.import": ("Import (replaces the tree)", "导入（替换整棵树）"),
    "intents.export_yaml": ("Export YAML", "导出 YAML"),
    "intents.export_json": ("Export JSON", "导出 JSON"),
    "intents.download": ("Download", "下载"),
    "intents.test_heading": ("### 🧪 Test a question", "### 🧪 测试问题"),
    "intents.test_placeholder": ("Type a question to see how it would be routed", "输入问题，查看路由结果"),
    "intents.test": ("Test", "测试"),
    "intents.scores": ("Every leaf's score", "各叶子意图得分"),
    "intents.uncovered_kb": ("Knowledge base", "知识库"),
    "intents.add_uncovered": ("Add an intent for it", "为它添加意图"),
    # The Traces tab
    "traces.tab": ("Traces", "追踪"),
    "traces.intro": (
        "Every question and upload leaves a trace here (only you see yours). Pick one to see what happened inside.",
        "每次提问和上传都会留下追踪记录（仅自己可见），点击一行查看内部过程。",
    ),
    "traces.filter": ("Filter", "筛选"),
    "traces.filter_placeholder": ("words in the question", "问题中的词"),
    "traces.status": ("Status", "状态"),
    # A request's status: the Traces list's mark and words, and its filter (ragapp.ui.trace_views)
    "status.all": ("all", "全部"),
    "status.ok": ("ok", "正常"),
    "status.refused": ("refused", "拒答"),
    "status.not found": ("not found", "未找到"),
    "status.degraded": ("degraded", "降级"),
    "status.failed": ("failed", "失败"),
    "status.clarified": ("asked back", "已反问"),
    "status.cancelled": ("cancelled", "已取消"),
    "traces.mode": ("Mode", "模式"),
    "traces.feedback": ("Feedback", "反馈"),
    "traces.all": ("all", "全部"),
    "traces.down": ("👎 thumbs down", "👎 差评"),
    "traces.up": ("👍 thumbs up", "👍 好评"),
    "traces.any": ("any feedback", "有反馈"),
    "traces.none": ("no feedback", "无反馈"),
    "traces.everyone": ("Everyone's", "所有用户"),
    "traces.refresh": ("Refresh", "刷新"),
    "traces.recent": ("Recent requests (click one)", "最近的请求（点击查看）"),
    "traces.waterfall": ("Waterfall", "时间线"),
    "traces.intents": ("Intent scores", "意图得分"),
    "traces.search": ("Search", "检索"),
    "traces.fused": ("Fused candidates", "融合结果"),
    "traces.channels": ("Each channel's hits", "各通道命中"),
    "traces.calls": ("Model calls: exact prompts and completions", "模型调用：完整提示与输出"),
    "traces.budget": ("Prompt budget: tokens per part", "提示词预算：各部分的词元"),
    "traces.agent": ("Agent steps", "智能体步骤"),
    "traces.why_doc": ("Why not this document?", "为什么没有检索到这份文档？"),
    "traces.why": ("Explain", "解释"),
    "traces.export": ("Export JSON", "导出 JSON"),
    "traces.experience": ("What procedural memory has learned", "过程记忆学到的经验"),
    # Test cases and evaluation (in the Traces tab)
    "cases.docs": ("Documents that should answer it", "应命中的文档"),
    "cases.save": ("Save as test case", "保存为测试用例"),
    "cases.panel": ("Test cases and evaluation", "测试用例与评估"),
    "cases.saved": ("Saved test cases", "已存的测试用例"),
    "cases.to_delete": ("Test case to delete", "要删除的用例"),
    "cases.try": (
        "Try a change before keeping it (the current settings always run too)",
        "先试后改（当前设置也总会一并运行）",
    ),
    "cases.fusion": ("Fusion", "融合方式"),
    "cases.top_k": ("Chunks in prompt", "提示中的片段数"),
    "cases.limit": ("Candidates to rerank", "重排候选数"),
    "cases.rerank": ("Rerank (the shipped model, if off)", "重排（未开启时用内置模型）"),
    "cases.run": ("Run evaluation", "运行评估"),
    "cases.min_score": ("Lowest rerank score (min_rerank_score)", "最低重排得分（min_rerank_score）"),
    "cases.chart": ("Hit rate, MRR, nDCG", "命中率、MRR、nDCG"),
    "cases.must_contain": ("The right answer contains (optional)", "正确答案包含（可选）"),
    "cases.must_contain_hint": (
        "e.g. 90 minutes; empty: citing a picked document is right",
        "例如：90 分钟；留空则引用所选文档即算正确",
    ),
    "cases.unanswerable": ("The documents do not hold the answer: a refusal is right", "文档中没有答案：拒答才正确"),
    "cases.answers": (
        "**Answers**: ask every test case as the chat would, judge each answer (accurate +1, missing 0, hallucinated "
        "−1) and compare with the last run.",
        "**回答**：像对话一样提问每个测试用例，判定每个回答（准确 +1、缺失 0、幻觉 −1），并与上次运行比较。",
    ),
    "cases.check": ("Check the answers", "检查回答"),
    # The Admin tab
    "admin.tab": ("Admin", "管理"),
    "admin.intro": (
        "Users sign in with the accounts listed here (the same file `python -m ragapp.users` edits); a change "
        "counts from the user's next action.",
        "此处管理登录账户（与命令行 `python -m ragapp.users` 编辑同一文件），修改在用户下次操作时生效。",
    ),
    "admin.accounts_off": (
        "👤 **Accounts are off**: one local user may do everything, so there are no users to manage. To ask "
        "people to sign in, add an admin with `python -m ragapp.users add NAME --role admin` and start the app "
        "with `RAGAPP_AUTH__ENABLED=true`.",
        "👤 **账户功能未开启**：一位本地用户可以做所有操作，没有要管理的用户。要让大家登录，请用 "
        "`python -m ragapp.users add NAME --role admin` 添加管理员，并设置 `RAGAPP_AUTH__ENABLED=true` 启动应用。",
    ),
    "admin.users_heading": ("### 👥 Users", "### 👥 用户"),
    "admin.users": ("Users", "用户"),
    "admin.add_user": ("Add user", "添加用户"),
    "admin.name": ("Name", "用户名"),
    "admin.password": ("Password", "密码"),
    "admin.password_info": ("At least 8 characters", "至少 8 个字符"),
    "admin.role": ("Role", "角色"),
    "admin.groups": ("Groups", "分组"),
    "admin.change_user": ("Change a user", "修改用户"),
    "admin.user": ("User", "用户"),
    "admin.set_role": ("Change role", "修改角色"),
    "admin.new_password": ("New password", "新密码"),
    "admin.reset": ("Reset password", "重置密码"),
    "admin.remove": ("Remove user", "删除用户"),
    "admin.kb_heading": ("### 🔐 Knowledge-base access", "### 🔐 知识库权限"),
    "admin.kb_table": ("Who may read and edit", "谁可以阅读和编辑"),
    "admin.kb": ("Knowledge base", "知识库"),
    "admin.readers": ("Readers", "可读"),
    "admin.readers_info": (
        "Names or group:NAME, comma-separated; none and no editors: open to all",
        "用户名或 group:组名，逗号分隔；可读与可编辑都留空则对所有人开放",
    ),
    "admin.editors": ("Editors", "可编辑"),
    "admin.save_kb": ("Save access", "保存权限"),
    "admin.settings_heading": ("### ⚙️ Settings (read-only; secrets masked)", "### ⚙️ 设置（只读；密钥已隐藏）"),
    "admin.settings": ("Effective settings", "当前设置"),
    "admin.mcp_heading": ("### 🧩 Agent mode's MCP servers and their tools", "### 🧩 智能体模式的 MCP 服务器及其工具"),
    # The Admin tab's sign-ins (ragapp.ui.admin_sessions)
    "signins.heading": ("### 🔑 Sign-ins", "### 🔑 登录会话"),
    "signins.intro": (
        "Every browser signed in now, on any replica. A sign-in ended here is refused on its next request "
        "(on another replica within a few seconds).",
        "当前所有已登录的浏览器（包括其他副本上的）。在此结束的登录，会在其下一次请求时被拒绝（其他副本上几秒内生效）。",
    ),
    "signins.table": ("Signed in now", "当前登录"),
    "signins.pick": ("Sign-in", "登录"),
    "signins.end": ("Sign out this browser", "让该浏览器退出登录"),
    "signins.user": ("User", "用户"),
    "signins.end_all": ("Sign out all of this user's", "让该用户全部退出登录"),
    "signins.refresh": ("Refresh", "刷新"),
    # The Admin tab's audit log (ragapp/ui/admin_audit.py)
    "audit.heading": (
        "### 📜 Audit log\nSign-ins, every change and every question's scope: who, when, from where, what "
        "(docs/audit.md).",
        "### 📜 审计日志\n登录、每一次更改和每个问题的检索范围：谁、何时、从哪里、做了什么（见 docs/audit.md）。",
    ),
    "audit.all": ("All", "全部"),
    "audit.user": ("User", "用户"),
    "audit.action": ("Action", "动作"),
    "audit.target": ("Target", "对象"),
    "audit.target_info": (
        "Part of a knowledge base, document (kb/name), user, source or intent",
        "知识库、文档（知识库/名称）、用户、同步源或意图名称的一部分",
    ),
    "audit.outcome": ("Outcome", "处理结果"),
    "audit.since": ("From (UTC)", "起始（UTC）"),
    "audit.until": ("Before (UTC)", "截止（UTC，不含）"),
    "audit.show": ("Show", "查询"),
    "audit.download": ("Download CSV", "下载 CSV"),
    "audit.table": ("Audit records, newest first", "审计记录（最新在前）"),
    "audit.csv": ("CSV file", "CSV 文件"),
    "role.reader": ("Reader", "读者"),
    "role.editor": ("Editor", "编辑"),
    "role.admin": ("Admin", "管理员"),
}

# A role's name, in both languages (for text made at run time).
ROLE_WORDS = {role: TEXTS[f"role.{role}"] for role in ("reader", "editor", "admin")}

# Gradio's own words that Gradio 6.31 leaves untranslated: its status line's key (shown raw in either language),
# the queue line it announces for an event waiting its turn, and the footer's "Runs" link, which its Chinese table
# lacks. (The status tracker's "queue: 1/2 |" and "processing |" are not keyed: the page's script says those.)
GRADIO_TEXTS: dict[str, tuple[str, str]] = {
    "common.complete": ("Done", "完成"),
    "status.queue_position": ("In queue: {position} of {size}", "排队中：第 {position} 位，共 {size} 位"),
    "common.runs": ("Runs", "运行记录"),
    "common.runs_description": ("View runs saved in this browser", "查看保存在此浏览器中的运行记录"),
}

I18N = gr.I18n(
    en={PREFIX + key: en for key, (en, _zh) in TEXTS.items()} | {key: en for key, (en, _zh) in GRADIO_TEXTS.items()},
    # Gradio looks a zh-CN or zh-TW browser's words up under zh-CN/zh-TW, then zh, then en.
    zh={PREFIX + key: zh for key, (_en, zh) in TEXTS.items()} | {key: zh for key, (_en, zh) in GRADIO_TEXTS.items()},
)


def both(english: str, chinese: str) -> str:
    """Text made at run time in both languages, of which the page shows its own (a style in ``HEAD`` hides the
    other): chat messages, reports and toasts are made on the server, which does not know the page's language,
    and a kept chat reopened after a switch follows it too. For HTML and Markdown only (a table's cell, a
    button's label or a step's live line shows the tags)."""
    return f'<span class="lang-en">{english}</span><span class="lang-zh">{chinese}</span>'


def t(key: str) -> I18nData:
    """The text ``key`` of ``TEXTS``, for a component property Gradio translates (label, info, placeholder, a
    button's or a Markdown's value, a tab's or an accordion's label, a choice's label)."""
    if key not in TEXTS:
        raise KeyError(f"no text {key!r}: add it, in English and Chinese, to TEXTS in ragapp/ui/i18n.py")
    return I18N(PREFIX + key)


def t_str(key: str) -> str:
    """``t(key)`` as the marked string Gradio's frontend translates, for properties typed ``str`` only (the
    chatbot's placeholder)."""
    return str(t(key))
