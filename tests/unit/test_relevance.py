"""The relevance decision on hand-built candidate lists (``ragapp.retrieval.relevance``)."""

from __future__ import annotations

from ragapp.config import RetrievalSettings
from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.retrieval.relevance import Candidate, RelevanceRules, candidates_of, decide, keyword_terms

RULES = RelevanceRules(
    min_rerank_score=0.2,
    agreement_top_n=3,
    agreement_max_fused_rank=3,
    rerank_margin=0.7,
    cross_language_top_n=3,
    min_cross_language_similarity=0.8,
)


def _c(
    cid: str,
    fused: int,
    rerank: float | None,
    vector: tuple[int, float] | None = None,
    keyword: tuple[int, float] | None = None,
    same_language: bool = True,
) -> Candidate:
    ranks = {ch: hit[0] for ch, hit in (("vector", vector), ("keyword", keyword)) if hit is not None}
    scores = {ch: hit[1] for ch, hit in (("vector", vector), ("keyword", keyword)) if hit is not None}
    return Candidate(cid, fused, ranks, scores, rerank, same_language)


def _kept(candidates: list[Candidate], rules: RelevanceRules = RULES, reranked: bool = True) -> list[str]:
    return [c.chunk_id for c, d in zip(candidates, decide(candidates, rules, reranked), strict=True) if d.kept]


def test_both_channels_agreeing_on_a_top_chunk_keep_it_despite_a_low_rerank_score() -> None:
    # A paraphrased question: the evidence is fused rank 2, both channels rank it top 3, the reranker says 0.1.
    paraphrase = [
        _c("evidence", 2, 0.10, vector=(1, 0.86), keyword=(2, 7.0)),
        _c("near", 1, 0.12, vector=(4, 0.84), keyword=(1, 9.0)),  # keyword's best, vector's 4th: no agreement
        _c("other", 3, 0.05, vector=(2, 0.85)),
    ]
    assert _kept(paraphrase) == ["evidence"]
    decision = decide(paraphrase, RULES, True)[0]
    assert decision.reason == "both channels agree (keyword 2, vector 1; fused rank 2)" and decision.score == 0.10
    # Agreement is bounded by the fused rank, and off at 0.
    assert _kept([_c("evidence", 4, 0.10, vector=(1, 0.86), keyword=(2, 7.0))]) == []
    off = RelevanceRules(min_rerank_score=0.2)
    assert _kept(paraphrase, off) == []


def test_by_default_agreement_reaches_both_channels_top_five() -> None:
    # The fresh set's "用什么命令清掉？" (dev): both evidence passages fused first and second, each first in one
    # channel and 5th or 7th in the other, the reranker 0.01 and 0.09; junk above 0.2 behind them.
    rules = RelevanceRules.from_settings(RetrievalSettings())
    candidates = [
        _c("clean", 1, 0.01, vector=(7, 0.89), keyword=(1, 5.0)),
        _c("aptitude-clean", 2, 0.09, vector=(1, 0.89), keyword=(5, 3.4)),
        _c("junk", 3, 0.34, vector=(2, 0.88)),
    ]
    assert _kept(candidates, rules) == ["aptitude-clean", "junk"]
    assert _kept(candidates, RelevanceRules.from_settings(RetrievalSettings(agreement_top_n=3))) == ["junk"]
    assert _kept(candidates, RelevanceRules.from_settings(RetrievalSettings(agreement_top_n=7))) == [
        "clean", "aptitude-clean", "junk"
    ]  # fmt: skip


def test_a_loosely_related_chunk_far_below_the_best_is_cut() -> None:
    candidates = [
        _c("answer", 1, 0.98, vector=(1, 0.9)),
        _c("topic", 2, 0.25, vector=(2, 0.85)),  # clears 0.2, but 0.73 below the best
        _c("close", 3, 0.40, vector=(3, 0.84)),  # 0.58 below: kept
    ]
    assert _kept(candidates) == ["answer", "close"]
    reasons = [d.reason for d in decide(candidates, RULES, True)]
    assert reasons[1] == "more than 0.7 below the best rerank score"
    assert _kept(candidates, RelevanceRules(min_rerank_score=0.2)) == ["answer", "topic", "close"]  # no margin


def test_a_passage_in_another_language_is_judged_by_the_vector_channel() -> None:
    # A Chinese question over English text: the reranker scored none of these.
    candidates = [
        _c("top", 1, None, vector=(1, 0.83), same_language=False),
        _c("evidence", 2, None, vector=(3, 0.81), same_language=False),
        _c("weak", 3, None, vector=(2, 0.78), same_language=False),  # similarity too low
        _c("deep", 4, None, vector=(4, 0.82), same_language=False),  # ranked below the top 3
        _c("keyword-only", 5, None, keyword=(1, 9.0), same_language=False),  # a shared name, no vector match
    ]
    decisions = decide(candidates, RULES, True)
    assert [d.kept for d in decisions] == [True, True, False, False, False]
    assert decisions[1].reason == "other language: vector rank 3, similarity ≥ 0.8" and decisions[1].score == 0.81
    assert decisions[4].reason == "other language, not found by the vector channel"
    # Neither waved through nor dropped blindly: the old fallback (channel thresholds) would keep only the
    # keyword hit here (BM25 9.0 >= 6), and dropping them all would empty the prompt.
    assert _kept(candidates, reranked=False) == ["keyword-only"]


def test_an_other_language_passage_is_ranked_among_its_own_language() -> None:
    """The vector channel interleaves languages by rank: in a mixed corpus the English passages of a Chinese
    question sit at vector ranks 2, 4, 6; each is judged by its place among the English ones (1, 2, 3)."""
    candidates = [
        _c("zh-a", 1, 0.9, vector=(1, 0.9)),
        _c("en-b", 2, None, vector=(2, 0.82), same_language=False),
        _c("zh-c", 3, 0.85, vector=(3, 0.88)),
        _c("en-d", 4, None, vector=(4, 0.81), same_language=False),
        _c("zh-e", 5, 0.8, vector=(5, 0.87)),
        _c("en-f", 6, None, vector=(6, 0.81), same_language=False),
        _c("en-g", 7, None, vector=(8, 0.85), same_language=False),  # fourth among the English ones
    ]
    assert _kept(candidates) == ["zh-a", "en-b", "zh-c", "en-d", "zh-e", "en-f"]
    assert decide(candidates, RULES, True)[5].reason == "other language: vector rank 3, similarity ≥ 0.8"


def test_without_a_reranker_the_channel_thresholds_decide_as_before() -> None:
    s = RetrievalSettings()
    rules = RelevanceRules.from_settings(s)
    candidates = [
        _c("strong-vector", 1, None, vector=(1, s.min_vector_similarity)),
        _c("strong-keyword", 2, None, keyword=(1, s.min_keyword_score)),
        _c("agreeing", 3, None, vector=(2, s.min_agreement_similarity), keyword=(2, 0.5)),
        _c("weak", 4, None, vector=(3, s.min_agreement_similarity)),  # keyword did not find it
        _c("other-language", 5, None, vector=(4, 0.84), same_language=False),  # no language rule without a reranker
    ]
    assert _kept(candidates, rules, reranked=False) == ["strong-vector", "strong-keyword", "agreeing"]


def test_candidates_of_reads_fused_ranks_and_languages() -> None:
    def chunk(cid: str, text: str) -> Chunk:
        return Chunk(cid, "d", 0, text, "d.txt")

    ranked = [  # the reranked order: b first, though a was fused first
        RetrievedChunk(chunk("b", "电池续航十小时。"), 0.5, {"vector": 2}, {"vector": 0.8}, 0.9),
        RetrievedChunk(chunk("a", "The battery lasts ten hours."), 0.7, {"vector": 1}, {"vector": 0.9}, None),
    ]
    views = candidates_of("电池能用多久？", ranked)
    assert [(v.chunk_id, v.fused_rank, v.same_language) for v in views] == [("b", 2, True), ("a", 1, False)]


def test_an_other_language_passage_must_stand_out_from_the_others() -> None:
    """multilingual-e5 scores every passage in another language alike: in a mixed knowledge base only a lead
    over their median counts; over text in the other language only, the rank rule alone decides."""
    rules = RelevanceRules(min_rerank_score=0.2, cross_language_top_n=3, cross_language_lead=0.02)
    own = _c("own", 9, 0.9, vector=(9, 0.9))  # a passage in the question's language: the base is mixed
    alike = [_c(f"zh-{i}", i, None, vector=(i, 0.77 - i / 1000), same_language=False) for i in range(1, 8)]
    assert _kept([own, *alike], rules) == ["own"]
    reason = decide([own, *alike], rules, True)[1].reason
    assert reason == "other language: similarity only +0.003 against the other-language median"
    standing_out = [own, _c("evidence", 1, None, vector=(1, 0.84), same_language=False), *alike]
    assert _kept(standing_out, rules) == ["own", "evidence"]
    assert decide(standing_out, rules, True)[1].reason.endswith("above the other-language median")
    assert _kept(alike, rules) == ["zh-1", "zh-2", "zh-3"]  # nothing in the question's language


def test_an_other_language_passage_sharing_names_with_the_question_is_kept() -> None:
    # A Chinese question naming ggsearch36: the keyword channel finds the English passage that names it too.
    rules = RelevanceRules(min_rerank_score=0.2, cross_language_top_n=3, cross_language_lead=0.02,
                           cross_language_keyword_top_n=2)  # fmt: skip
    candidates = [
        _c("zh-near", 1, 0.05, vector=(1, 0.85), keyword=(1, 3.0)),  # same language, judged by the reranker
        _c("ggsearch", 2, None, vector=(9, 0.83), keyword=(2, 2.8), same_language=False),
        _c("second", 3, None, keyword=(3, 2.1), same_language=False),
        _c("third", 4, None, keyword=(4, 1.9), same_language=False),  # third among the other-language ones
    ]
    decisions = decide(candidates, rules, True)
    assert [d.kept for d in decisions] == [False, True, True, False]
    assert decisions[1].reason == "other language: keyword rank 1 among the other-language passages (shared names)"
    off = RelevanceRules(min_rerank_score=0.2, cross_language_top_n=3, cross_language_lead=0.02)
    assert _kept(candidates, off) == []


def test_the_shipped_defaults_apply_the_rules_chosen_by_measurement() -> None:
    rules = RelevanceRules.from_settings(RetrievalSettings())
    candidates = [
        _c("answer", 2, 0.98, vector=(3, 0.88)),
        _c("evidence", 1, 0.09, vector=(1, 0.9), keyword=(1, 8.0)),  # agreement keeps it
        _c("topic", 3, 0.60, vector=(2, 0.87)),  # 0.38 below the best: cut by the 0.3 margin
        _c("close", 4, 0.75, keyword=(2, 5.0)),  # 0.23 below: kept
        # Other-language passages, judged by their vector rank among themselves and their lead over the median
        _c("english", 5, None, vector=(4, 0.86), same_language=False),  # first, 0.06 above the median: kept
        _c("english-second", 6, None, vector=(5, 0.81), same_language=False),  # no lead: out
        _c("english-third", 7, None, vector=(6, 0.80), same_language=False),
        _c("english-fourth", 8, None, vector=(7, 0.80), same_language=False),
        _c("english-far", 9, None, vector=(8, 0.79), same_language=False),
        _c("english-name", 10, None, keyword=(3, 4.0), same_language=False),  # shares a name: kept
    ]
    assert _kept(candidates, rules) == ["answer", "evidence", "close", "english", "english-name"]
    answer_in_english = [_c("english", 1, None, vector=(1, 0.77), same_language=False)]
    assert _kept(answer_in_english, rules) == ["english"]  # English text only: no lead asked for


def test_with_require_names_a_candidate_naming_nothing_the_question_names_is_dropped() -> None:
    chunks = [
        Chunk("a-0000", "a", 0, "Use -T to set the number of threads.", "fasta_guide.pdf"),
        Chunk("b-0000", "b", 0, "sort 的字符排序受语言环境的影响。", "ch08.zh-cn.html"),
    ]
    ranked = [RetrievedChunk(c, 1.0 - i / 10, {"vector": i + 1}, {"vector": 0.9}, 0.5) for i, c in enumerate(chunks)]
    candidates = candidates_of("FASTA 程序用哪个选项设置线程数？", ranked)
    assert [c.names_question for c in candidates] == [True, False]  # the source name counts: fasta_guide.pdf
    rules = RelevanceRules(min_rerank_score=0.2, require_names=True)
    decisions = decide(candidates, rules, True)
    assert [d.kept for d in decisions] == [True, False]
    assert decisions[1].reason == "names none of what the question names"
    assert all(d.kept for d in decide(candidates, RelevanceRules(min_rerank_score=0.2), True))  # off by default
    assert [c.names_question for c in candidates_of("How many threads?", ranked)] == [None, None]


def test_a_keyword_query_keeps_a_top_keyword_chunk_holding_every_word() -> None:
    chunks = [
        Chunk("errors-0001", "m", 1, "- E05 Drive wheel stuck.\n- E07 Cliff sensor error: wipe the sensors.", "m.pdf"),
        Chunk("errors-0000", "m", 0, "8. Troubleshooting and error codes: the light ring flashes red.", "m.pdf"),
        Chunk("glide-0000", "g", 0, "The Glide W3 holds itself on glass by suction.", "g.html"),
    ]
    # What the shipped reranker said for "E07": the evidence 0.13, a neighbour 0.86.
    ranked = [
        RetrievedChunk(chunks[1], 0.6, {"vector": 7}, {"vector": 0.79}, 0.86),
        RetrievedChunk(chunks[2], 0.5, {"vector": 14}, {"vector": 0.78}, 0.96),
        # the vector channel's 6th: outside the agreement rule's top 5, so a question is judged by the reranker
        RetrievedChunk(chunks[0], 0.7, {"vector": 6, "keyword": 1}, {"vector": 0.79, "keyword": 1.6}, 0.13),
    ]
    rules = RelevanceRules.from_settings(RetrievalSettings())
    for query in ("E07", "e07 cliff sensor"):
        candidates = candidates_of(query, ranked)
        assert [c.holds_keywords for c in candidates] == [False, False, True]
        decisions = decide(candidates, rules, True)
        assert decisions[2].kept and decisions[2].reason == "a keyword query: keyword rank 1, holds every word of it"
    # A question is judged as before (the reranker's 0.13 is under 0.2), and the rule is off at 0.
    question = candidates_of("What does E07 mean?", ranked)
    assert question[2].holds_keywords is None and not decide(question, rules, True)[2].kept
    off = RelevanceRules.from_settings(RetrievalSettings(keyword_query_top_n=0))
    assert not decide(candidates_of("E07", ranked), off, True)[2].kept
    # A chunk that lacks a word of the query is not kept by it.
    assert candidates_of("E07 battery", ranked)[2].holds_keywords is False


def test_only_a_few_words_without_a_question_make_a_keyword_query() -> None:
    assert keyword_terms("yylex return value") == {"yylex", "return", "valu"}
    assert keyword_terms("配件 包邮") == {"配件", "包邮"}
    for question in (
        "What does yylex return?",
        "yylex return value?",
        "Name a division of Toyota.",
        "X.25 uses what type",
        "配件包邮吗",
        "the value that the scanner returns at the end of input",
    ):
        assert keyword_terms(question) is None, question
