"""The catalogue's words for a search (``ragapp.core.said``): the relevance gate's reasons."""

from __future__ import annotations

# code: (English, Chinese)
SEARCH: dict[str, tuple[str, str]] = {
    # The relevance gate (ragapp.retrieval.relevance): why a candidate was kept or dropped
    "relevance.keyword_query": (
        "a keyword query: keyword rank {rank}, holds every word of it",
        "关键词查询：关键词排名 {rank}，包含其中的每个词",
    ),
    "relevance.names_none": ("names none of what the question names", "没有提到问题中的任何名称"),
    "relevance.agree": (
        "both channels agree ({ranks}; fused rank {rank})",
        "两个通道都找到了它（{ranks}；融合排名 {rank}）",
    ),
    "relevance.rerank_below": ("rerank score below {min}", "重排得分低于 {min}"),
    "relevance.rerank_margin": ("more than {margin} below the best rerank score", "比最高重排得分低 {margin} 以上"),
    "relevance.rerank_kept": ("rerank score ≥ {min}", "重排得分 ≥ {min}"),
    "relevance.other_unseen": ("other language, not found by the vector channel", "其他语言，向量通道没有找到"),
    "relevance.other_low": (
        "other language: vector rank {rank} or similarity too low",
        "其他语言：向量排名 {rank}，或相似度过低",
    ),
    "relevance.other_alike": (
        "other language: similarity only {lead:+.3f} against the other-language median",
        "其他语言：相似度只比其他语言的中位数高 {lead:+.3f}",
    ),
    "relevance.other_kept": (
        "other language: vector rank {rank}, similarity ≥ {min}",
        "其他语言：向量排名 {rank}，相似度 ≥ {min}",
    ),
    "relevance.other_kept_lead": (
        "other language: vector rank {rank}, similarity ≥ {min}, {lead:+.3f} above the other-language median",
        "其他语言：向量排名 {rank}，相似度 ≥ {min}，比其他语言的中位数高 {lead:+.3f}",
    ),
    "relevance.other_names": (
        "other language: keyword rank {rank} among the other-language passages (shared names)",
        "其他语言：在其他语言的资料中关键词排名 {rank}（有共同的名称）",
    ),
    "relevance.remote": ("kept by {channel}'s own relevance gate", "{channel} 自己的相关性过滤保留了它"),
    "relevance.vector": ("vector similarity ≥ {min}", "向量相似度 ≥ {min}"),
    "relevance.keyword": ("keyword score ≥ {min}", "关键词得分 ≥ {min}"),
    "relevance.both": ("both channels, vector similarity ≥ {min}", "两个通道都找到，向量相似度 ≥ {min}"),
    "relevance.below": ("channel scores below the thresholds", "各通道得分都低于阈值"),
    # A channel that found a chunk through a question the model wrote for it (ragapp.enrich.questions)
    "search.via_question": (
        "found through a question written for it: “{question}”",
        "通过为它生成的问题找到：“{question}”",
    ),
    # The rule that made a step skip its model call (a step's detail "rule", ragapp.qa.pipeline)
    "skipped.stands_alone": (
        "the question stands alone: searched as asked, no model call",
        "问题本身完整：按原问题检索，未调用模型",
    ),
    "skipped.parts_by_wording": (
        "the question stands alone: its parts are cut by its wording, no model call",
        "问题本身完整：按字面拆分各个小问题，未调用模型",
    ),
    "skipped.strong_search": (
        "the question as asked already finds a strong passage: searched as asked, no model call",
        "按原问题已能检索到高度相关的段落：按原问题检索，未调用模型",
    ),
    "skipped.own_language": (
        "not translated: the passages kept are in the question's language, none in the other came near it; "
        "no model call",
        "未翻译：保留的段落都是提问所用语言的，另一种语言中没有相关段落；未调用模型",
    ),
    # A search that lost a part (ragapp.retrieval.pipeline): what failed, then what the answer uses
    "degraded.timed_out": ("{channel} search timed out after {s:g} s", "{channel} 检索超时（{s:g} 秒）"),
    "degraded.failed": ("{channel} search failed ({error})", "{channel} 检索失败（{error}）"),
    "degraded.uses": ("; this answer uses {channels} search only", "；本次回答只用了 {channels} 检索"),
    "degraded.none_answered": ("; no search channel answered", "；没有检索通道返回结果"),
    "degraded.reranker": (
        "reranker failed ({error}); using the fused order",
        "重排序失败（{error}）；改用融合后的排序",
    ),
    "degraded.remote_skipped": (
        "Other ragapp sources were not searched: a document filter applies to this app's documents only.",
        "没有检索其他 ragapp 来源：文档筛选只适用于本应用的文档。",
    ),
    # Routing (ragapp.router, ragapp.qa.pipeline): why a (sub-)question went where it did. A reason of several
    # parts is worded part after part; a part that continues another begins with its own separator.
    "routing.off": (
        "intent routing is off (RAGAPP_WORKFLOW__ROUTE=false): searching everything",
        "意图路由已关闭（RAGAPP_WORKFLOW__ROUTE=false）：检索全部",
    ),
    "routing.no_leaves": ("the intent tree has no leaves: searching everything", "意图树没有叶子意图：检索全部"),
    "routing.no_intent": ("no intent ({error}): searching everything", "没有意图（{error}）：检索全部"),
    "routing.below": (
        "the best intent, {path}, scored {score:.2f} < {min:.2f}: searching everything",
        "得分最高的意图 {path} 只有 {score:.2f} < {min:.2f}：检索全部",
    ),
    "routing.none_matched": ("the model matched no intent: searching everything", "模型没有匹配到任何意图：检索全部"),
    "routing.named": ("the question names {paths}", "问题提到了 {paths}"),
    "routing.named_over": (
        "the question names {paths} (the model chose {model})",
        "问题提到了 {paths}（模型选的是 {model}）",
    ),
    "routing.close": (
        "{count} intents under different parents scored within {margin:.2f}: {paths}",
        "{count} 个不同上级下的意图得分相差不到 {margin:.2f}：{paths}",
    ),
    "routing.twins": (
        "'{name}' exists under {count} parents and the question names none of them: {paths}",
        "“{name}”在 {count} 个上级下都有，问题没有指明是哪一个：{paths}",
    ),
    "routing.routed": ("routed to {paths}", "路由到 {paths}"),
    "routing.system": ("a message to the assistant: {path} ({score:.2f})", "发给助手的话：{path} ({score:.2f})"),
    "routing.user_all": ("the user chose to search everything", "用户选择了检索全部"),
    "routing.user_chose": ("the user chose {path}", "用户选择了 {path}"),
    "routing.choice_gone": ("{choice!r} no longer exists", "{choice!r} 已不存在"),
    "routing.memory": ("your memory “{memory}” names {label}", "你的记忆“{memory}”提到了 {label}"),
    "routing.no_model_call": (" (no model call: {reply})", "（未调用模型：{reply}）"),
    "routing.nothing_relevant": (
        "; but nothing in the knowledge bases is relevant: not asking back, searching everything",
        "；但知识库中没有相关的内容：不反问，检索全部",
    ),
    "routing.best_elsewhere": (
        "; but the best passage is in {kb}: not asking back, searching everything",
        "；但最相关的段落在 {kb} 中：不反问，检索全部",
    ),
    "routing.within_kbs": (
        "; only intents within the chosen knowledge bases ({kbs}) kept",
        "；只保留所选知识库（{kbs}）内的意图",
    ),
    "routing.within_kbs_none": (
        "; only intents within the chosen knowledge bases ({kbs}) kept: none, so searching them all",
        "；只保留所选知识库（{kbs}）内的意图：一个也没有，因此检索全部",
    ),
}
