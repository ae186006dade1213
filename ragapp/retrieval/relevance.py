"""The relevance gate: which ranked candidates may reach the prompt, and why.

A bare probability threshold fails on both ends (held-out traces): a paraphrased question's evidence, fused
rank 1-3 with both channels agreeing, scored 0.08-0.14 and nothing reached the prompt; and the reranker never
judges a passage in another language than the question, so a Chinese question over English text kept nothing.
So the decision reads the fused rank and the channels' agreement as well as the rerank score:

1. **agreement**: a chunk both channels rank in their top ``agreement_top_n``, at fused rank
   ``agreement_max_fused_rank`` or better, is kept whatever its rerank score (so the prompt is never empty
   when both channels agree on a top chunk);
2. **rerank score**: otherwise a judged chunk is kept from ``min_rerank_score`` up, unless it lies more than
   ``rerank_margin`` below the best judged candidate (a loosely related chunk when the top one is far above);
3. **cross-language**: a passage the reranker did not judge (another language than the question) is judged
   by the vector channel, the one channel that reads across languages: kept when its vector rank among the
   other-language candidates is within ``cross_language_top_n``, its similarity reaches
   ``min_cross_language_similarity`` and it leads the median similarity of those candidates by
   ``cross_language_lead`` when candidates in the question's own language are there too. The lead is what
   carries meaning in a mixed knowledge base: multilingual-e5 scores every passage in the other
   language alike (English questions over Chinese text 0.74-0.80, Chinese over English 0.83-0.87, in the
   answer set's traces), so a bare threshold let three unrelated Chinese passages into most English prompts,
   while the evidence, when found, stood 0.03-0.11 above the rest;
4. **no reranker** (or a failed one): channel-score thresholds calibrated on the demo set;
5. **keyword query**, before all of the above: a query of a few words that asks no question ("E07", "yylex
   return value") keeps a chunk the keyword channel ranks in its top ``keyword_query_top_n`` that holds every
   one of its words. The reranker was trained on questions: it scored the E07 passage 0.13 for "E07" (0.98 for
   "what does error code E07 mean?"), and the channel thresholds want a long match (keyword score ≥ 6).

The defaults were chosen on BEIR sets and the answer set (docs/benchmarks.md, "Relevance gate").
Everything here is pure: hand-built lists test it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from statistics import median

from ragapp.config import RetrievalSettings
from ragapp.core.facts import PassageFacts, key_facts, ocr_fold
from ragapp.core.lang import language_of
from ragapp.core.types import REMOTE_PREFIX, Chunk, RelevanceDecision, RetrievedChunk
from ragapp.store.tokenize import OCR_MARK, chunk_tokens, tokenize

_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d+)*")
MAX_KEYWORD_TERMS = 4
# What makes a query a question (or a task) rather than keywords: a question mark, a question word anywhere, an
# imperative start ("Name a luxury division of Toyota."), a Chinese question word or particle.
_ASKS = re.compile(
    r"[?？]|\b(?:what|how|which|why|when|where|who|whom|whose)\b"
    r"|^\s*(?:is|are|was|were|do|does|did|can|could|should|would|will|shall|may|might|has|have|had|name|list|"
    r"give|tell|explain|describe|compare|find|show)\b"
    r"|吗|呢|什么|怎么|怎样|如何|哪|多少|几|是否|为什么|为何|请问",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class RelevanceRules:
    """The knobs of the decision (``from_settings`` reads them from the app's settings). ``agreement_top_n`` 0
    and ``rerank_margin`` None turn those rules off; ``cross_language_top_n`` 0 drops every unjudged
    passage in another language. The channel thresholds' defaults are RetrievalSettings' own."""

    min_rerank_score: float
    agreement_top_n: int = 0
    agreement_max_fused_rank: int = 0
    rerank_margin: float | None = None
    cross_language_top_n: int = 0
    min_cross_language_similarity: float = 0.0
    cross_language_lead: float = 0.0
    cross_language_keyword_top_n: int = 0
    require_names: bool = False
    keyword_query_top_n: int = 0
    min_vector_similarity: float = 0.875
    min_agreement_similarity: float = 0.80
    min_keyword_score: float = 6.0

    @classmethod
    def from_settings(cls, s: RetrievalSettings) -> RelevanceRules:
        return cls(
            min_rerank_score=s.min_rerank_score,
            agreement_top_n=s.agreement_top_n,
            agreement_max_fused_rank=s.agreement_max_fused_rank,
            rerank_margin=s.rerank_margin,
            cross_language_top_n=s.cross_language_top_n,
            min_cross_language_similarity=s.min_cross_language_similarity,
            cross_language_lead=s.cross_language_lead,
            cross_language_keyword_top_n=s.cross_language_keyword_top_n,
            require_names=s.require_names,
            keyword_query_top_n=s.keyword_query_top_n,
            min_vector_similarity=s.min_vector_similarity,
            min_agreement_similarity=s.min_agreement_similarity,
            min_keyword_score=s.min_keyword_score,
        )


@dataclass(frozen=True)
class Candidate:
    """What the decision reads of one ranked candidate."""

    chunk_id: str
    fused_rank: int  # 1-based, in the fused order (before reranking)
    channel_ranks: Mapping[str, int]
    channel_scores: Mapping[str, float]
    rerank_score: float | None
    same_language: bool = True  # the passage is in the question's language
    names_question: bool | None = None  # holds a name the question names (None: the question names nothing)
    holds_keywords: bool | None = None  # holds every word of a keyword query (None: the query is a question)


def candidates_of(query: str, ranked: Sequence[RetrievedChunk]) -> list[Candidate]:
    """The decision's view of ``ranked`` (the reranked order): fused ranks as fusion ordered them (ties by the
    best channel rank, then chunk id) and whether each passage is in the question's language."""
    by_fused = sorted(
        ranked, key=lambda c: (-c.fused_score, min(c.channel_ranks.values(), default=0), c.chunk.chunk_id)
    )
    fused_rank = {c.chunk.chunk_id: i for i, c in enumerate(by_fused, start=1)}
    language = language_of(query)
    names = question_names(query)
    terms = keyword_terms(query)
    return [
        Candidate(
            c.chunk.chunk_id,
            fused_rank[c.chunk.chunk_id],
            c.channel_ranks,
            c.channel_scores,
            c.rerank_score,
            language_of(c.chunk.text) == language,
            _holds_a_name(c.chunk, names) if names else None,
            _holds_terms(c.chunk, terms) if terms else None,
        )
        for c in ranked
    ]


def keyword_terms(query: str) -> frozenset[str] | None:
    """The words of a keyword-style query ("E07 error", "yylex return value", "配件 包邮": at most
    ``MAX_KEYWORD_TERMS``, no question mark, no question word, no "name a ..."), as the keyword index reads
    them; None for a question."""
    if _ASKS.search(query):
        return None
    terms = frozenset(tokenize(query))
    return terms if 1 <= len(terms) <= MAX_KEYWORD_TERMS else None


def _holds_terms(chunk: Chunk, terms: frozenset[str]) -> bool:
    """``chunk`` is indexed by every one of ``terms`` (an OCR'd chunk by their folded forms)."""
    held = set(chunk_tokens(chunk))
    return all(t in held or OCR_MARK + ocr_fold(t) in held for t in terms)


def question_names(query: str) -> tuple[str, ...]:
    """The names a question asks about: its key facts other than plain numbers (fasta36, FASTA, -T, GRUB2)."""
    return tuple(f for f in key_facts(query) if not _PLAIN_NUMBER.fullmatch(f))


def _holds_a_name(chunk: Chunk, names: Sequence[str]) -> bool:
    facts = PassageFacts.of(f"{chunk.source}\n{chunk.heading or ''}\n{chunk.text}", chunk.ocr_confidence is not None)
    return any(facts.has(name) for name in names)


def decide(candidates: Sequence[Candidate], rules: RelevanceRules, reranked: bool) -> list[RelevanceDecision]:
    """One decision per candidate, in their order. ``reranked``: a reranker ran (and did not fail), so a
    candidate without a rerank score is one it chose not to judge."""
    judged = [c.rerank_score for c in candidates if c.rerank_score is not None]
    best = max(judged, default=None)
    # The vector channel interleaves its languages by rank (zh 1, en 1, zh 2, ...), so an other-language passage
    # is ranked among the other-language passages: in a corpus of one language that is its vector rank.
    others = sorted(
        (c for c in candidates if not c.same_language and "vector" in c.channel_ranks),
        key=lambda c: c.channel_ranks["vector"],
    )
    rank_among_others = {c.chunk_id: i for i, c in enumerate(others, start=1)}
    typical = median([c.channel_scores.get("vector", 0.0) for c in others]) if others else 0.0
    # The lead matters where other-language passages compete with the question's own (a mixed knowledge
    # base); over text in the other language only (xquad zh -> en), the best of them are all there is.
    lead_rules = rules if any(c.same_language for c in candidates) else replace(rules, cross_language_lead=0.0)
    by_keyword = sorted(
        (c for c in candidates if not c.same_language and "keyword" in c.channel_ranks),
        key=lambda c: c.channel_ranks["keyword"],
    )
    keyword_rank = {c.chunk_id: i for i, c in enumerate(by_keyword, start=1)}
    named = rules.require_names and any(c.names_question for c in candidates)
    out = []
    for c in candidates:
        by_words = c.channel_ranks.get("keyword")
        if named and c.names_question is False:
            out.append(RelevanceDecision(False, "names none of what the question names", c.rerank_score or 0.0))
        elif c.holds_keywords and by_words is not None and by_words <= rules.keyword_query_top_n:
            reason = f"a keyword query: keyword rank {by_words}, holds every word of it"
            out.append(RelevanceDecision(True, reason, c.channel_scores.get("keyword", 0.0)))
        elif c.rerank_score is not None:
            out.append(_judged(c, c.rerank_score, best if best is not None else c.rerank_score, rules))
        elif reranked and not c.same_language:
            vector = _cross_language(c, rank_among_others.get(c.chunk_id), typical, lead_rules)
            out.append(vector if vector.kept else _shared_names(c, keyword_rank.get(c.chunk_id), vector, rules))
        else:
            out.append(channel_decision(c, rules))
    return out


def _judged(c: Candidate, score: float, best: float, rules: RelevanceRules) -> RelevanceDecision:
    if agrees(c, rules):
        ranks = ", ".join(f"{ch} {r}" for ch, r in sorted(c.channel_ranks.items()))
        return RelevanceDecision(True, f"both channels agree ({ranks}; fused rank {c.fused_rank})", score)
    if score < rules.min_rerank_score:
        return RelevanceDecision(False, f"rerank score below {rules.min_rerank_score:g}", score)
    if rules.rerank_margin is not None and best - score > rules.rerank_margin:
        return RelevanceDecision(False, f"more than {rules.rerank_margin:g} below the best rerank score", score)
    return RelevanceDecision(True, f"rerank score ≥ {rules.min_rerank_score:g}", score)


def agrees(c: Candidate, rules: RelevanceRules) -> bool:
    """Both channels rank it in their top ``agreement_top_n`` and it is fused near the top."""
    ranks = [c.channel_ranks.get("vector"), c.channel_ranks.get("keyword")]
    return (
        rules.agreement_top_n > 0
        and all(r is not None and r <= rules.agreement_top_n for r in ranks)
        and c.fused_rank <= rules.agreement_max_fused_rank
    )


def _cross_language(c: Candidate, rank: int | None, typical: float, rules: RelevanceRules) -> RelevanceDecision:
    """``rank``: the passage's vector rank among the candidates in other languages than the question's;
    ``typical``: their median similarity."""
    similarity = c.channel_scores.get("vector", 0.0)
    if rank is None:
        return RelevanceDecision(False, "other language, not found by the vector channel", 0.0)
    if rank > rules.cross_language_top_n or similarity < rules.min_cross_language_similarity:
        return RelevanceDecision(False, f"other language: vector rank {rank} or similarity too low", similarity)
    lead = similarity - typical
    if rules.cross_language_lead and lead < rules.cross_language_lead:
        reason = f"other language: similarity only {lead:+.3f} against the other-language median"
        return RelevanceDecision(False, reason, similarity)
    reason = f"other language: vector rank {rank}, similarity ≥ {rules.min_cross_language_similarity:g}"
    if rules.cross_language_lead:
        reason += f", {lead:+.3f} above the other-language median"
    return RelevanceDecision(True, reason, similarity)


def _shared_names(
    c: Candidate, rank: int | None, vector: RelevanceDecision, rules: RelevanceRules
) -> RelevanceDecision:
    """An other-language passage the keyword channel ranks near the top of the other-language ones: across
    languages only names match (ggsearch36, f.idl, DLL in a Chinese question), so such a match means much."""
    if rank is None or rank > rules.cross_language_keyword_top_n:
        return vector
    reason = f"other language: keyword rank {rank} among the other-language passages (shared names)"
    return RelevanceDecision(True, reason, vector.score)


def channel_decision(c: Candidate, rules: RelevanceRules) -> RelevanceDecision:
    """Without a rerank score: a strong vector match, a strong keyword match, or both channels agreeing on a
    fair vector match (docs/benchmarks.md, "Relevance gate"); a passage only another ragapp found passed
    that app's own gate (it returns only those)."""
    remote = [ch for ch in c.channel_ranks if ch.startswith(REMOTE_PREFIX)]
    if remote and not set(c.channel_ranks) - set(remote):
        return RelevanceDecision(
            True, f"kept by {remote[0]}'s own relevance gate", c.channel_scores.get(remote[0], 0.0)
        )
    vector = c.channel_scores.get("vector", 0.0)
    keyword = c.channel_scores.get("keyword", 0.0)
    if vector >= rules.min_vector_similarity:
        return RelevanceDecision(True, f"vector similarity ≥ {rules.min_vector_similarity:g}", vector)
    if keyword >= rules.min_keyword_score:
        return RelevanceDecision(True, f"keyword score ≥ {rules.min_keyword_score:g}", keyword)
    if keyword > 0 and vector >= rules.min_agreement_similarity:
        return RelevanceDecision(True, f"both channels, vector similarity ≥ {rules.min_agreement_similarity:g}", vector)
    return RelevanceDecision(False, "channel scores below the thresholds", vector)


def is_relevant(candidate: RetrievedChunk, settings: RetrievalSettings) -> bool:
    """The gate's rule for one candidate on its own scores alone (no agreement, margin or language rule): with
    a rerank score it decides; without one, the channel thresholds."""
    if candidate.rerank_score is not None:
        return candidate.rerank_score >= settings.min_rerank_score
    c = Candidate(candidate.chunk.chunk_id, 0, candidate.channel_ranks, candidate.channel_scores, None)
    return channel_decision(c, RelevanceRules.from_settings(settings)).kept
