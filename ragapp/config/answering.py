"""Settings of how a question is answered: reranking, retrieval, the workflow and the agent."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator

from ragapp.config.routing import RouteCalibration


class RerankSettings(BaseModel):
    backend: str = Field(
        "builtin",
        description="builtin (the cross-encoder trained for this app and shipped with it: see "
        "ragapp/rerank/weights/MODEL_CARD.md), cross_encoder (any model: needs `model`) or none (fused order "
        "and the channel-score relevance gate).",
    )
    model: str | None = Field(
        None,
        description="cross_encoder: a local model folder or hub id (hub ids need network access); "
        "builtin: another folder written by `python -m ragbench.rerank.train` (default: the shipped one).",
    )
    max_length: int = Field(
        160,
        ge=32,
        description="Tokens per (question, passage) pair; longer passages are cut. The shipped reranker was "
        "trained at 160 (a Chinese character is one token); other cross-encoders may want 512.",
    )
    batch_size: int = Field(32, ge=1, description="Pairs scored per batch.")


class RemoteSource(BaseModel):
    """Another ragapp searched as a retrieval channel (``remote:<name>``), over its ``POST /v1/retrieve``."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,30}$", description="Names its passages: '<name> · doc'.")
    url: str = Field(description="The other app's address, e.g. http://10.0.0.5:7860.")
    api_key: SecretStr | None = Field(None, description="A key of that app (python -m ragapp.users key NAME).")


class RetrievalSettings(BaseModel):
    channels: list[str] = Field(default_factory=lambda: ["vector", "keyword"], description="Retrieval channels to run.")
    remotes: list[RemoteSource] = Field(
        default_factory=list,
        description='Other ragapp servers searched beside the channels, as JSON: [{"name": "hr", "url": '
        '"http://10.0.0.5:7860", "api_key": "rag-..."}]. Each is the channel remote:<name> (its weight in '
        "weights, its time in channel_timeout_s); it searches when no knowledge base is picked.",
    )
    recall_budget: int = Field(20, ge=1, description="Candidates each channel returns.")
    fusion: str = Field(
        "zscore",
        description="How channel rankings are merged: zscore or minmax (weighted blend of scores normalised "
        "per query, each language apart), or rrf (weighted reciprocal rank). zscore won or tied on every "
        "evaluation set and on the bilingual demo: see docs/benchmarks.md.",
    )
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant k.")
    weights: dict[str, float] = Field(
        default_factory=lambda: {"vector": 1.0, "keyword": 1.0},
        description="Per-channel fusion weights (missing channels weigh 1.0).",
    )
    candidate_limit: int = Field(20, ge=1, description="Fused candidates passed to the reranker.")
    context_top_k: int = Field(5, ge=1, description="Chunks placed in the prompt.")
    rerank_weight: float = Field(
        0.15,
        ge=0.0,
        le=1.0,
        description="How far the reranker overrides the fused order: candidates are sorted by (1 - w) x fused "
        "score + w x rerank score, both standardised over the question's candidates (1: the reranker alone; "
        "0: the fused order, the rerank score then only gates relevance). 0.15 was the best weight on HotpotQA "
        "and xquad-zh together (`python -m ragbench.rerank.blend`); the reranker alone is worse than either: "
        "see docs/benchmarks.md.",
    )
    min_rerank_score: float = Field(
        0.2,
        description="With a reranker: chunks scoring below this are dropped unless both channels agree on them "
        "(the shipped reranker's scores are probabilities; 0.2 is the highest that keeps 90% of relevant held-out "
        "passages: see `python -m ragbench.rerank.measure`; kept by the relevance rules: docs/benchmarks.md).",
    )
    agreement_top_n: int = Field(
        5,
        ge=0,
        description="With a reranker: a chunk both channels rank in their top N (and fused at rank "
        "agreement_max_fused_rank or better) is kept whatever its rerank score, so the prompt is never empty "
        "when the channels agree on a top chunk (0: off). 5, not the 3 chosen on BEIR sets: the shipped reranker "
        "scored Chinese paraphrases' evidence under its threshold or margin; on the fresh set's dev split, live, 5 "
        "brought it into the prompt for 41 of 44 questions against 39 (docs/benchmarks.md, Relevance gate).",
    )
    agreement_max_fused_rank: int = Field(
        3, ge=0, description="With a reranker: the agreement rule keeps only chunks fused at this rank or better."
    )
    keyword_query_top_n: int = Field(
        5,
        ge=0,
        description='A keyword-style query ("E07", "yylex return value": at most 4 words, no question mark '
        "or question word) keeps a chunk the keyword channel ranks in its top N that holds every word of the "
        "query, whatever its rerank or channel scores: the reranker, trained on questions, scored such queries' "
        "evidence under min_rerank_score (0: off; questions are never judged by it).",
    )
    rerank_margin: float | None = Field(
        0.3,
        ge=0.0,
        description="With a reranker: a chunk scoring more than this below the question's best rerank score is "
        "dropped even above min_rerank_score, unless both channels agree on it (None: off).",
    )
    cross_language_top_n: int = Field(
        3,
        ge=0,
        description="With a reranker: a passage in another language than the question (the reranker does not "
        "score those) is kept when the vector channel ranks it in the top N of the passages in its language, its "
        "similarity reaches min_cross_language_similarity and it leads the others by cross_language_lead "
        "(0: such passages are dropped).",
    )
    min_cross_language_similarity: float = Field(
        0.74,
        description="With a reranker: the vector similarity a passage in another language needs at least "
        "(a floor: multilingual-e5 scores unrelated text in another language 0.74-0.87).",
    )
    cross_language_lead: float = Field(
        0.02,
        ge=0.0,
        description="With a reranker: how far a passage in another language must stand above the median "
        "similarity of the other-language candidates (the evidence stood 0.03-0.11 above them in the answer "
        "set's traces, unrelated passages within 0.02).",
    )
    cross_language_keyword_top_n: int = Field(
        2,
        ge=0,
        description="With a reranker: a passage in another language is also kept when the keyword channel ranks "
        "it in the top N of the other-language passages (across languages only names match: ggsearch36, f.idl).",
    )
    require_names: bool = Field(
        False,
        description="When the question names something (an identifier, an acronym, a code: fasta36, FASTA, "
        "E07) and some candidates hold it, the candidates that hold none of those names are dropped.",
    )
    min_vector_similarity: float = Field(
        0.875,
        description="Without a reranker: a chunk whose vector similarity reaches this is relevant on its own "
        "(calibrated for multilingual-e5, whose cosines sit high: see docs/benchmarks.md, Relevance gate).",
    )
    min_agreement_similarity: float = Field(
        0.80,
        description="Without a reranker: a chunk found by both channels is relevant from this similarity up.",
    )
    min_keyword_score: float = Field(
        6.0, description="Without a reranker: a BM25 score that makes a keyword hit relevant on its own."
    )
    channel_timeout_s: float = Field(5.0, gt=0, description="Time budget of each channel.")
    cache_size: int = Field(
        256,
        ge=0,
        description="Retrieval results kept for repeated questions (0 turns the cache off); "
        "any upload or delete empties it.",
    )


class WorkflowSettings(BaseModel):
    rewrite: bool = Field(
        True,
        description="Rewrite follow-up questions into standalone ones and split multi-part ones (one LLM call, "
        "made only in a conversation, for a follow-up that points back or looks multi-part). A question asked on "
        "its own is split by its wording, without a call, whatever this says.",
    )
    rewrite_multi_part: bool = Field(
        False,
        description="In a conversation, have the model also rewrite a question that stands alone (names its "
        "subject, no word points back) but asks several things; off, its parts are cut by its wording, as for a "
        "question asked on its own, and no call is made (measured in docs/workflow.md).",
    )
    rewrite_above_score: float | None = Field(
        0.9,
        ge=0.0,
        le=1.0,
        description="In a conversation, do not rewrite a follow-up whose own search already keeps a passage the "
        "reranker scores this high or more (the answer still reads the conversation; without a reranker no score "
        "counts); None: always rewrite a follow-up that points back. 0.9 was chosen on the blind answer set's dev "
        "split (docs/benchmarks.md).",
    )
    route: bool = Field(
        True,
        description="Classify each (sub-)question against the intent tree (by the embedder when one leaf is "
        "clearly closest, else one LLM call per sub-question).",
    )
    fast_route: bool = Field(
        True,
        description="Route without the LLM call when the embedder finds one leaf clearly closest to the question "
        "(its path, description or an example); the LLM classifier is asked only when that is not clear.",
    )
    fast_route_min_similarity: float = Field(
        0.88, description="Fast routing: the best leaf's cosine similarity to the question must reach this."
    )
    fast_route_margin: float = Field(
        0.03,
        ge=0.0,
        description="Fast routing: ... and stand this far above every leaf that is not its twin (a same-named "
        "leaf under another product, which the decision rules handle).",
    )
    route_same_search: bool = Field(
        True,
        description="Route without the LLM call also when every leaf the embedder scores within "
        "route_same_search_margin of its best one searches the same knowledge bases (within the user's scope) "
        "with the same top-k and instructions: whichever of them the model picked, the same passages would be "
        "searched. A message to the assistant (a SYSTEM leaf) within the margin still asks the model.",
    )
    route_same_search_margin: float = Field(
        0.01,
        ge=0.0,
        le=1.0,
        description="The leaves within this cosine similarity of the embedder's best one are the model's real "
        "choices (see route_same_search). 0.01 was chosen on the dev half of the labelled routing questions "
        "(docs/benchmarks.md).",
    )
    min_intent_score: float = Field(0.5, ge=0.0, le=1.0, description="Intents scored below this are dropped.")
    max_intents: int = Field(2, ge=1, description="At most this many intents are kept per sub-question.")
    clarify_margin: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="Knowledge leaves under different parents scoring within this of the best one make the app "
        "ask back which one is meant.",
    )
    max_clarify_choices: int = Field(4, ge=2, description="Choices offered when the app asks back.")
    route_calibration: RouteCalibration = Field(
        default_factory=RouteCalibration,
        description="How the router turns a leaf's embedder similarity, its margin and the model's score into the "
        "probability that the leaf is right, the score a routing decision reports: a logistic model fitted on the "
        "labelled routing questions' dev half (docs/workflow.md); each weight is its own variable, e.g. "
        "RAGAPP_WORKFLOW__ROUTE_CALIBRATION__INTERCEPT.",
    )
    route_fit_min: float = Field(
        0.7,
        ge=0.0,
        le=1.0,
        description="A question routed to a leaf whose calibrated score (the probability that it is the right "
        "leaf) is below this fits no leaf well: it also searches the knowledge bases no intent leaf covers (an "
        "upload the tree does not know yet), within the user's scope. 1.0: always; 0.0: never. 0.7 was chosen "
        "on the dev half of the labelled routing questions, as the lowest that 90% of the wrongly routed ones "
        "score below (docs/workflow.md).",
    )
    widen_below_score: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="A routed search that keeps passages but none the reranker scores this high or more is weak: it "
        "is searched again with the knowledge bases no intent leaf covers beside the leaf's (one more search, no "
        "model call). Without a reranker only a search that kept nothing widens (to the whole scope).",
    )
    translate: bool = Field(
        True,
        description="A question whose search finds passages in the other language (Chinese over English documents, "
        "or the reverse) and nothing strong in its own is translated by the model (one short call) and searched "
        "in that language too; the answer stays in the question's language.",
    )
    translate_below_score: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Translate only when no passage kept in the question's own language has a rerank score this "
        "high (without a reranker: when none of its own language is kept).",
    )
    translate_only_if_other_kept: bool = Field(
        False,
        description="Do not translate when the relevance gate kept passages and all of them are in the question's "
        "own language: the other language's candidates were weighed and none came near the question, and "
        "searching them in their language costs a model call to find no more. When the gate kept nothing, the "
        "question is translated as before. Off: on the blind set's test split it lost the evidence of a Chinese "
        "question over an English manual (docs/benchmarks.md).",
    )
    rephrase: bool = Field(
        True,
        description="A question whose search keeps passages but none the reranker scores rephrase_below_score or "
        "more is searched once more together with the sentence the model would answer it with (one short call; "
        "the sentence is never shown, the answer still comes from passages only).",
    )
    rephrase_below_score: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="Search again only when no passage kept has a rerank score this high (without a reranker, "
        "never). 0.3 was chosen on the blind answer set's dev split (docs/benchmarks.md).",
    )
    max_sub_questions: int = Field(3, ge=1, description="A multi-part question is split into at most this many.")
    step_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Give up on a rewriting, routing or summarising call after this long; the question then goes "
        "on as asked, unrouted or unsummarised (the answer call has RAGAPP_LLM__TIMEOUT_S).",
    )
    recent_turns: int = Field(
        3, ge=0, description="Conversation turns (question + answer) kept verbatim; older ones are summarised."
    )
    summary_chars: int = Field(400, ge=50, description="Upper bound on the summary of older turns, in characters.")
    context_window: int | None = Field(
        None,
        ge=512,
        description="Tokens the model reads per call (default: RAGAPP_LLM__N_CTX); set it for a server model.",
    )
    check_support: bool = Field(
        True,
        description="Check each answer sentence against the passages: its key facts (numbers, codes, identifiers, "
        "quoted names) must be in a passage it then cites; an answer whose core is unsupported is refused.",
    )
    support_overlap: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="Share of a sentence's content words that the passage(s) supporting it must hold, besides "
        "all of its key facts.",
    )
    select: Literal["auto", "on", "off"] = Field(
        "off",
        description="Answer by selection: the model first copies the passage sentence that states the answer, or "
        "says none; the answer is then written from that sentence alone, or is the sentence itself for a question "
        'that asks for a bare fact, and "none" is said as not sure. auto: with a model the app can hold to the '
        "passages' sentences by a grammar (the local one); on: with any model (a server's reply is matched to a "
        "sentence by its words); off (the default, chosen on the blind set's dev split, where the 1.5B model's "
        "picks lowered truthfulness and delayed the first token; docs/benchmarks.md): the answer is written from "
        "all the passages.",
    )
    verify: bool = Field(
        True,
        description="After a whole answer, ask the model in a call of its own whether the passages the answer "
        "cites state it (one word, yes or no): its probability of yes is one more signal of the answer's "
        "confidence (on the blind sets' dev splits, truthfulness out of fold +0.41 with it against +0.38 without; "
        "docs/lab-log.md; on the fresh test split +0.39 against +0.41). 3.7 s after the answer on a manual's passages "
        "on 2 cores (1.4 s on the demo's), none before its first token; made only where the backend scores its "
        "tokens (the local model). Off: the confidence reads the answer without it.",
    )
    not_sure: bool = Field(
        True,
        description='Say "not sure" instead of an answer whose confidence is low (the calibrated probability '
        "that it is right is under the threshold): the passage most likely to hold the answer is shown, and the "
        "model's guess on request. Off: low answers are stated with a low-confidence warning.",
    )
    calibrator: Path | None = Field(
        None,
        description="A confidence calibrator's coefficients (JSON, as `python -m ragbench.answers.calibrate "
        "--output` writes them from your own answer-set runs); None: the one shipped, fitted on the blind set's "
        "dev split.",
    )
    confidence_high_from: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="The calibrated probability that an answer is right from which it is shown as high "
        "confidence (None: the calibrator's own, chosen on the blind set's dev split; docs/benchmarks.md).",
    )
    confidence_low_below: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="The calibrated probability that an answer is right under which its confidence is low (said "
        'as "not sure"; None: the calibrator\'s own, the one that maximised truthfulness on the dev split).',
    )
    show_evidence: bool = Field(
        True,
        description="As soon as the passages are chosen, show the sentence(s) from them that best answer the "
        "question, quoted with the citation, while the model reads the passages and writes its answer.",
    )
    suggest_questions: bool = Field(
        True,
        description="Under a finished answer, offer up to three next questions as buttons, made without a model "
        "call from the headings of the sections beside the cited ones (docs/chats.md says the rule); off: none.",
    )
    max_question_chars: int = Field(
        2000,
        ge=10,
        description="Longest question accepted; a longer one is refused with a message before any search or "
        "model call (it would be embedded in full and overflow the reranker).",
    )
    condense_keep: int = Field(
        2,
        ge=0,
        description="In the answer prompt, cut every passage but the best one to this many sentences (those "
        "sharing the most words with the question): fewer tokens for the model to read before its first word. "
        "0 keeps whole passages. Citations and the support check always use whole passages.",
    )


class McpServer(BaseModel):
    """One MCP server the agent may use: a command started over stdio, or a streamable HTTP URL."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,30}$", description="Prefixes its tools' names.")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_way_in(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: give either a command (stdio) or a url (HTTP), not both")
        return self


class AgentSettings(BaseModel):
    mode: Literal["workflow", "agent", "auto"] = Field(
        "workflow",
        description="How questions are answered by default: workflow (rewrite, route, retrieve, answer), agent "
        "(the model calls tools step by step) or auto (agent for comparisons and multi-part questions).",
    )
    knowledge: Literal["tool", "middleware"] = Field(
        "tool",
        description="How the agent gets knowledge: tool (it calls search_knowledge when it decides to) or "
        "middleware (passages for the question are put in front of every model call).",
    )
    protocol: Literal["auto", "native", "json"] = Field(
        "auto",
        description="Tool calling: native function calling (OpenAI-compatible servers), a JSON protocol (the "
        "local model), or auto (native where the backend has it).",
    )
    tools: list[str] = Field(
        default_factory=lambda: ["search_knowledge", "list_knowledge_bases", "read_chunk"],
        description="Tools the agent may call (registry names).",
    )
    max_steps: int = Field(
        6, ge=1, le=20, description="Tool steps before the agent must answer (choosing a group of tools is a step)."
    )
    group_tools_above: int = Field(
        30,
        ge=0,
        le=1000,
        description="With more tools than this (its own and MCP servers'), the model first picks a group (knowledge, "
        "each MCP server...), then a tool in it; 0: always in groups. 30: on the tools-in-groups dev questions "
        "the packaged 1.5B model chose no better in groups at 9 or 30 tools (docs/benchmarks.md); "
        "lower it for a model that follows the group step.",
    )
    tool_timeout_s: float = Field(10.0, gt=0, description="Time budget of one tool call.")
    step_timeout_s: float = Field(60.0, gt=0, description="Time budget of one agent decision (a model call).")
    mcp_servers: list[McpServer] = Field(
        default_factory=list,
        description='Other MCP servers whose tools the agent may call, as JSON: [{"name": "weather", "url": '
        '"http://host/mcp", "headers": {...}}] or [{"name": "files", "command": "python", "args": [...], "env": '
        "{...}}]. Each call has the tool time budget; its result is quoted data the answer may cite.",
    )
