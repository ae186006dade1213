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
}
