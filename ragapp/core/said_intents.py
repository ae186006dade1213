"""The catalogue's words for the intent tree (``ragapp.core.said``): why a tree or an edit to it was refused.

An intent is named by its code (``{code!r}``); one read from a file before it has a code, by its place in the
file (``{where}``: "2 > 1", the first child of the second intent)."""

from __future__ import annotations

# code: (English, Chinese)
INTENTS: dict[str, tuple[str, str]] = {
    # The tree's rules (ragapp.router.tree.IntentTree.problems)
    "intent_tree.code_twice": ("the code {code!r} is used more than once", "代码 {code!r} 被使用了不止一次"),
    "intent_tree.code_invalid": (
        "the code {code!r} is not valid: use 1-64 lowercase letters, digits, '_', '.' or '-', starting with a "
        "letter or digit",
        "代码 {code!r} 无效：请使用 1 到 64 个小写字母、数字、'_'、'.' 或 '-'，并以字母或数字开头",
    ),
    "intent_tree.no_name": ("{code!r} needs a name", "{code!r} 需要一个名称"),
    "intent_tree.no_parent": (
        "{code!r} has parent {parent!r}, which does not exist",
        "{code!r} 的上级 {parent!r} 不存在",
    ),
    "intent_tree.cycle": (
        "{code!r} is part of a cycle: a node cannot sit under itself",
        "{code!r} 处在一个循环中：节点不能位于自己之下",
    ),
    "intent_tree.group_kind": (
        "{code!r} has child intents, so it is a group and cannot have the kind {kind}: clear its kind, or move "
        "its children elsewhere",
        "{code!r} 有子意图，因此是一个分组，不能有类型 {kind}：请清除它的类型，或把它的子意图移到别处",
    ),
    "intent_tree.leaf_kind": (
        "the leaf {code!r} needs a kind: KB (search knowledge bases) or SYSTEM (reply directly)",
        "叶子意图 {code!r} 需要一个类型：KB（检索知识库）或 SYSTEM（直接回复）",
    ),
    "intent_tree.unknown_kind": (
        "{code!r} has the unknown kind {kind!r}: use KB or SYSTEM",
        "{code!r} 的类型 {kind!r} 未知：请使用 KB 或 SYSTEM",
    ),
    "intent_tree.kb_none": (
        "the KB leaf {code!r} needs at least one knowledge base",
        "KB 叶子意图 {code!r} 至少需要一个知识库",
    ),
    "intent_tree.kb_missing": (
        "the KB leaf {code!r} names knowledge base(s) that do not exist: {missing} (existing: {known})",
        "KB 叶子意图 {code!r} 指定的知识库不存在：{missing}（现有：{known}）",
    ),
    "intent_tree.kb_missing_none": (
        "the KB leaf {code!r} names knowledge base(s) that do not exist: {missing} (existing: none yet)",
        "KB 叶子意图 {code!r} 指定的知识库不存在：{missing}（目前还没有知识库）",
    ),
    "intent_tree.system_kbs": (
        "the SYSTEM leaf {code!r} answers without searching: remove its knowledge bases",
        "SYSTEM 叶子意图 {code!r} 不检索就直接回复：请去掉它的知识库",
    ),
    "intent_tree.top_k_range": (
        "{code!r} has top-k {top_k}: use a number from 1 to {most}",
        "{code!r} 的 top-k 为 {top_k}：请使用 1 到 {most} 之间的数",
    ),
    # A tree file's shape (ragapp.router.tree.tree_from_data, parse_tree)
    "intent_tree.no_list": ("the file has no 'intents' list at the top", "文件顶层没有 'intents' 列表"),
    "intent_tree.not_a_list": ("'intents' must be a list of intents", "'intents' 必须是意图的列表"),
    "intent_tree.too_deep": (
        "the tree is nested deeper than {most} levels; nothing was imported",
        "意图树嵌套超过 {most} 层；未导入任何内容",
    ),
    "intent_tree.too_many": (
        "the tree is over {most:d} intents; nothing was imported",
        "意图树超过 {most:d} 个意图；未导入任何内容",
    ),
    "intent_tree.not_a_mapping": (
        "intent {where} must be a mapping with at least 'code' and 'name'",
        "第 {where} 个意图必须是至少含有 'code' 和 'name' 的映射",
    ),
    "intent_tree.no_code": (
        "intent {where} needs a 'code' (a short unique id such as 'lumen-v1.specs')",
        "第 {where} 个意图需要一个 'code'（简短且唯一的标识，例如 'lumen-v1.specs'）",
    ),
    "intent_tree.unknown_fields": (
        "intent {where} ({code!r}) has unknown field(s): {fields}",
        "第 {where} 个意图（{code!r}）有未知的字段：{fields}",
    ),
    "intent_tree.no_name_text": (
        "intent {where} ({code!r}) needs a 'name' (text)",
        "第 {where} 个意图（{code!r}）需要 'name'（文字）",
    ),
    "intent_tree.children_list": (
        "intent {where} ({code!r}): 'children' must be a list",
        "第 {where} 个意图（{code!r}）：'children' 必须是列表",
    ),
    "intent_tree.not_text": (
        "intent {where} ({code!r}): '{key}' must be text",
        "第 {where} 个意图（{code!r}）：'{key}' 必须是文字",
    ),
    "intent_tree.not_texts": (
        "intent {where} ({code!r}): '{key}' must be a list of texts",
        "第 {where} 个意图（{code!r}）：'{key}' 必须是文字的列表",
    ),
    "intent_tree.bad_kind": (
        "intent {where} ({code!r}): 'kind' must be KB or SYSTEM, not {kind!r}",
        "第 {where} 个意图（{code!r}）：'kind' 必须是 KB 或 SYSTEM，而不是 {kind!r}",
    ),
    "intent_tree.bad_top_k": (
        "intent {where} ({code!r}): 'top_k' must be a whole number",
        "第 {where} 个意图（{code!r}）：'top_k' 必须是整数",
    ),
    "intent_tree.file_empty": ("the file is empty", "文件是空的"),
    "intent_tree.file_deep": (
        "the file is nested too deeply (at most {most} levels of intents)",
        "文件嵌套太深（意图最多 {most} 层）",
    ),
    "intent_tree.file_aliases": (
        "the file uses YAML aliases (*name); write each intent out instead",
        "文件使用了 YAML 别名（*name）；请把每个意图都完整写出",
    ),
    "intent_tree.file_invalid_json": ("the file is not valid JSON: {line}", "文件不是有效的 JSON：{line}"),
    "intent_tree.file_invalid": ("the file is not valid YAML or JSON: {line}", "文件不是有效的 YAML 或 JSON：{line}"),
    "intent_tree.file_type": (
        "use a .yaml, .yml or .json file, not {name!r}",
        "请使用 .yaml、.yml 或 .json 文件，而不是 {name!r}",
    ),
    "intent_tree.file_utf8": (
        "the file could not be read as UTF-8 text ({error})",
        "无法按 UTF-8 文字读取该文件（{error}）",
    ),
    # An edit (ragapp.engine.intent_edits, ragapp.router.store)
    "intent_tree.edit_no_code": (
        "give the intent a code: a short unique id such as 'glide-w3.accessories'",
        "请给意图一个代码：简短且唯一的标识，例如 'glide-w3.accessories'",
    ),
    "intent_tree.edit_no_kind": ("choose a kind: group, KB or SYSTEM", "请选择类型：分组、KB 或 SYSTEM"),
    "intent_tree.edit_top_k": (
        "top-k must be a whole number (0 or empty: the default), not {value!r}",
        "top-k 必须是整数（0 或留空：使用默认值），而不是 {value!r}",
    ),
    "intent_tree.only_child": (
        "'{code}' is the only intent under the group '{parent}', and a group needs at least one child: add "
        "another intent under '{parent}' first, or delete '{parent}' itself",
        "'{code}' 是分组 '{parent}' 下唯一的意图，而分组至少需要一个子意图：请先在 '{parent}' 下添加另一个意图，"
        "或直接删除 '{parent}'",
    ),
    "intent_tree.gone_delete": (
        "there is no intent {code!r} to delete (was it deleted elsewhere?)",
        "没有可删除的意图 {code!r}（是否已在别处被删除？）",
    ),
    "intent_tree.gone_move": ("there is no intent {code!r} to move", "没有可移动的意图 {code!r}"),
    "intent_tree.gone_edit": (
        "there is no intent {code!r} to edit (was it deleted elsewhere?)",
        "没有可编辑的意图 {code!r}（是否已在别处被删除？）",
    ),
    "intent_tree.code_taken": (
        "the code {code!r} is already used by {path}: choose another code",
        "代码 {code!r} 已被 {path} 使用：请换一个代码",
    ),
    "intent_tree.invalid": ("the intent tree is invalid", "意图树无效"),
}
