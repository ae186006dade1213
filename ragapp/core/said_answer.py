"""The catalogue's words for an answer (``ragapp.core.said``)."""

from __future__ import annotations

# code: (English, Chinese)
ANSWER: dict[str, tuple[str, str]] = {
    # What a confidence check saw (ragapp.qa.confidence, ragapp.qa.answer_check): a check's detail
    "confidence.unsupported": ("{n} of {of} sentences not in the passages", "{of} 句中有 {n} 句不在原文中"),
    "confidence.none_supported": ("none of its sentences is in the passages", "没有一句在原文中"),
    "confidence.none_selected": (
        "no sentence of the passages answers the question",
        "原文中没有一句回答了这个问题",
    ),
    "confidence.supported": ("{n} of {of} sentences in the passages", "{of} 句中有 {n} 句在原文中"),
    "confidence.citation_for_value": (
        "a citation stands where the answer's value belongs",
        "回答中该给出数值的地方只有一个引用",
    ),
    "confidence.kind_missing": (
        "the question asks for a {kind}; the answer gives none",
        "问题问的是{kind}，回答没有给出",
    ),
    "confidence.kind_given": ("gives the {kind} asked for", "给出了所问的{kind}"),
    "confidence.quote_lacks": ("the quoted sentence does not say {missing}", "引用的原文句子没有说 {missing}"),
    "confidence.quote_same": ("the quoted sentence says the same", "引用的原文句子说法一致"),
    "confidence.parts_missing": ("{n} of {of} parts not in the documents", "{of} 个部分中有 {n} 个在文档中找不到"),
    "confidence.part": ("part {n}: ", "第 {n} 部分："),  # then what the check saw of that part
    "confidence.part_only": ("part {n}", "第 {n} 部分"),
    "confidence.part_figure": ("part {n}: {figure}", "第 {n} 部分：{figure}"),  # the on-topic score's figure
    "confidence.echoed": (
        "the model's reply only repeated the question; the documents' own sentence is shown instead",
        "模型的回复只是重复了问题，改为显示文档的原句",
    ),
    # Notices of a turn (ragapp.agent.runner, ragapp.qa.writer)
    "notice.agent_failed": (
        "The agent could not work on this question ({error}); answering with the workflow instead.",
        "智能体无法处理这个问题（{error}），改用工作流回答。",
    ),
    "notice.model_failed_midway": (
        "The model failed mid-way ({error}); answering from what was found.",
        "模型中途出错（{error}），根据已找到的资料回答。",
    ),
    "notice.agent_repeating": (
        "The agent kept repeating a call; answering from what was found.",
        "智能体一直重复同一个调用，根据已找到的资料回答。",
    ),
    "notice.step_limit": (
        "Reached the limit of {n} agent steps; answering from what was found.",
        "已达到 {n} 步的上限，根据已找到的资料回答。",
    ),
    "notice.llm_failed": ("The language model failed ({error})", "语言模型出错（{error}）"),
    "notice.llm_error": ("{error}", "语言模型出错：{error}"),  # the backend's own words (an LLMError)
    "notice.llm_empty": ("The language model returned an empty answer", "语言模型返回了空回答"),
    # What the token budget compressed to fit the prompt (ragapp.qa.prompt_fit, ragapp.agent.tool_budget)
    "budget.history_left_out": ("{n} earlier messages left out of the prompt", "{n} 条较早的消息未放入提示词"),
    "budget.summary_shortened": ("summary shortened from {a:d} to {b:d} tokens", "摘要从 {a:d} 个词元缩短到 {b:d} 个"),
    "budget.condensed": (
        "passages after the best condensed to {n} sentence(s) each",
        "除最相关的段落外，每段压缩为 {n} 句",
    ),
    "budget.dropped": ("{n} passages dropped", "舍弃了 {n} 个段落"),
    "budget.tools_shortened": ("tool descriptions shortened to their first sentence", "工具描述缩短为第一句"),
    "budget.tools_left_out": (
        "tool descriptions left out (names and arguments only)",
        "省略了工具描述（只保留名称和参数）",
    ),
    # A memory not kept (ragapp.engine.memories), after "Not kept:"
    "remember.off_app": (
        "Memory is turned off for this app (RAGAPP_MEMORY__ENABLED).",
        "本应用已关闭记忆功能（RAGAPP_MEMORY__ENABLED）。",
    ),
    "remember.off_user": (
        "Memory is off for you: turn it on under Memory in the chats sidebar.",
        "你已关闭记忆：可在侧栏的“记忆”中重新打开。",
    ),
    "remember.nothing": ("There is nothing to remember.", "没有要记住的内容。"),
    "remember.too_long": ("That is longer than {limit} characters: shorten it.", "超过 {limit} 个字符，请缩短。"),
    "remember.only_instructions": (
        "It holds only instructions to the assistant, which are never kept.",
        "内容只有写给助手的指令，不会被记住。",
    ),
    "remember.full": ("You already keep {limit} memories: delete some first.", "已有 {limit} 条记忆，请先删除一些。"),
    "remember.no_such": ("You have no memory of that id.", "没有这条记忆。"),
    # A step of the answer that failed (its bubble), in our own words
    "stage.no_sentence": ("the reply fits no sentence: {reply}", "模型的回复对不上任何一句：{reply}"),
    "stage.no_translation": ("the model gave no usable translation", "模型没有给出可用的翻译"),
    "stage.wrong_language": ("the translation is not in {language}", "译文不是{language}"),
}
# value name: {value: (English, Chinese)}
ANSWER_TERMS: dict[str, dict[str, tuple[str, str]]] = {
    # the kind of answer a question asks for (ragapp.qa.answer_fit.AnswerKind)
    "kind": {
        "number": ("number", "数字"),
        "version": ("version", "版本号"),
        "year": ("year", "年份"),
        "yes-no": ("yes-no", "是或否"),
    },
    "language": {"en": ("English", "英文"), "zh": ("Chinese", "中文")},  # a question's or a translation's
}
