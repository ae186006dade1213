"""The chat facet: questions in, engine events out (workflow, agent or auto), each request leaving a trace.

Both ways in (``ask`` and ``retrieve``) resolve the asker's scope here, so this is where every question's scope
is audited, whatever the channel (the Chat tab, the HTTP API, the MCP server): who searched which knowledge bases,
and the question's text only with ``audit.log_questions``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence

from ragapp.accounts.kb_access import KbAccess
from ragapp.agent.auto import choose_mode
from ragapp.agent.runner import AgentRunner
from ragapp.audit import AuditAction, AuditLog
from ragapp.config import Settings
from ragapp.core.access import LOCAL_ACTOR, Action, Actor
from ragapp.core.events import AnswerEvent, EngineEvent, ModeEvent, NoticeEvent, SuggestionsEvent
from ragapp.core.filters import DocumentFilter
from ragapp.core.lang import is_chinese, said_as
from ragapp.core.said import Said
from ragapp.core.types import LOCAL_OWNER, ChatTurn, Docs, Mode, RetrievalResult, Scope
from ragapp.engine.answer_cache import AnswerCache, stands_alone
from ragapp.engine.memories import Memories, Recall
from ragapp.engine.procedural import ProceduralMemory, Steering
from ragapp.qa.pipeline import AnswerPipeline, Clarified
from ragapp.qa.suggest import Window, Written, suggested
from ragapp.retrieval.pipeline import NO_MATCH, RetrievalPipeline
from ragapp.tracing.recorder import TraceRecorder

log = logging.getLogger(__name__)


class InFlight:
    """How many answers are being written now: the background enrichment waits while any is (answers first)."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def busy(self) -> bool:
        return self._count > 0

    def counted(self, events: Iterator[EngineEvent]) -> Iterator[EngineEvent]:
        """``events``, counted as an answer in flight from the first one asked for until the last (or a close)."""
        with self._lock:
            self._count += 1
        try:
            yield from events
        finally:
            with self._lock:
                self._count -= 1


class Chat:
    def __init__(
        self,
        settings: Settings,
        answers: AnswerPipeline,
        agent: AgentRunner,
        retrieval: RetrievalPipeline,
        recorder: TraceRecorder,
        access: KbAccess | None = None,
        audit: AuditLog | None = None,
        cache: AnswerCache | None = None,
        memories: Memories | None = None,
        procedural: ProceduralMemory | None = None,
        window: Window | None = None,
        indexing: Callable[[Scope], list[str]] | None = None,
        written: Written | None = None,
    ) -> None:
        self._settings = settings
        # The bases of a scope still being indexed in the background (``ragapp.enrich``); None: never any.
        self._indexing = indexing or (lambda _kbs: [])
        self.in_flight = InFlight()
        # The cited chunks' neighbours (``Catalog.chunk_window``), for the next questions; None: none offered.
        self._window = window if settings.workflow.suggest_questions else None
        # The questions written at ingest, offered first where a chunk has some.
        self._written: Written = written or (lambda _ids, _chinese: {})
        self._memories = memories  # None: no long-term memory
        self._procedural = procedural  # None (procedural.enabled off): Auto's rule alone, tools as configured
        self._cache = cache  # None (or off): every question runs the whole pipeline
        self._audit = audit or AuditLog.off()
        self._answers = answers
        self._agent = agent
        self._retrieval = retrieval
        self._recorder = recorder
        self._access = access  # None: accounts off, every knowledge base readable

    def warm_up(self) -> None:
        """Have the local model read the answers' instructions now (see ``AnswerPipeline.warm_up``)."""
        self._answers.warm_up()

    def ask(
        self,
        question: str,
        history: Sequence[ChatTurn] = (),
        kbs: Scope = None,
        *,
        summary: str = "",
        clarified: Clarified | None = None,
        mode: Mode | None = None,
        owner: str = LOCAL_OWNER,
        actor: Actor = LOCAL_ACTOR,
        where: DocumentFilter | None = None,
        fresh: bool = False,
    ) -> Iterator[EngineEvent]:
        """Stream the events of answering ``question`` from the knowledge bases ``kbs`` (None: all of them):
        stages, the rewritten question, routing, notices, retrieved chunks, tokens, answer. An unknown
        knowledge base simply holds nothing.

        ``history`` holds the recent turns and ``summary`` the older ones folded (a ``MemoryEvent`` says when
        to fold more). After a ``ClarifyEvent``, call again with ``clarified`` holding the user's pick.

        ``mode``: workflow, agent (tool calls, step by step) or auto (agent for comparisons and multi-hop
        questions); None: the configured default. A resumed clarification always continues the workflow.

        Each call leaves a trace owned by ``owner`` (see ``Observability.traces``). ``actor`` only ever
        searches the knowledge bases it may read, whatever ``kbs``, the mode or the agent's tool arguments say.

        ``where`` keeps the search to the documents it admits (tags, path, type, author, dates), resolved once
        here within those knowledge bases; one that admits none is said, and nothing is searched.

        A question that stands alone (the first of a chat, or a later one that needs nothing from it:
        ``answer_cache.stands_alone``) and was answered before over the same readable knowledge bases and
        unchanged documents is answered from the answer cache (a ``CachedEvent``, then the kept answer);
        ``fresh`` ("Answer again") answers it anew and keeps the new answer in place of the old.

        Long-term memory (``Memories``, per ``owner``): "remember that X" keeps X and says so instead of an
        answer; otherwise the owner's memories relevant to the question are recalled (a ``RecallEvent``) into
        their own part of the prompt, and after the answer a fact from the question may be offered to keep
        (a ``ProposalEvent``). An answer that used a memory is neither served from nor kept in the answer cache,
        which all users share.

        Once the answer has ended, the next questions its cited sections' neighbours answer come in a
        ``SuggestionsEvent`` (``ragapp.qa.suggest``; with ``workflow.suggest_questions`` on)."""
        if self._access is not None:
            kbs = self._access.scope_for(actor, kbs)
        shown = "workflow" if clarified is not None else (mode or self._settings.agent.mode)
        self._audited(actor, question, kbs, where, mode=shown)
        memories = self._memories
        said = memories.command(owner, question) if memories is not None and clarified is None else None
        if said is not None:
            return self._recorder.chat(said, owner=owner, question=question, mode=shown)
        asked = memories is not None and question_refusal(question, self._settings.workflow.max_question_chars) is None
        recall = memories.recall(owner, question) if memories is not None and asked else Recall()
        docs = self._retrieval.documents_matching(where, kbs) if where is not None else None
        if self._procedural is not None and clarified is None:
            self._procedural.asked(owner, question)
        wf = self._settings.workflow
        parts_rewritten = wf.rewrite and wf.rewrite_multi_part
        alone = stands_alone(question, history, summary, clarified, parts_rewritten=parts_rewritten)
        # An answer from a base still being indexed is not kept: the same question answers better once it is.
        alone = alone and not recall.memories and not self._indexing(kbs)
        cache = self._cache if self._cache is not None and alone else None
        lookup = cache.look_up(question, shown, kbs, docs) if cache is not None else None
        if cache is not None and lookup is not None and lookup.hit is not None and not fresh:
            served = self._suggesting(cache.served(lookup.hit), question)
            return self._recorder.chat(served, owner=owner, question=question, mode=shown)
        events = self._ask(question, history, kbs, summary, clarified, mode, docs, recall)
        if memories is not None:
            events = _offering(events, memories, owner, question)
        events = self._suggesting(events, question, [t.content for t in history if t.role == "user"])
        traced = self._recorder.chat(events, owner=owner, question=question, mode=shown)
        kept = cache.kept(traced, lookup, question) if cache is not None and lookup is not None else traced
        return self.in_flight.counted(kept)

    def ask_case(self, question: str, kbs: Scope = None, *, actor: Actor = LOCAL_ACTOR) -> Iterator[EngineEvent]:
        """``question`` asked as a saved test case is checked: alone (no history), in the configured mode, from
        the knowledge bases ``actor`` may read, audited like any question; neither traced, served from or kept in
        the answer cache, nor remembered or learned from (a check must not change what it checks)."""
        if self._access is not None:
            kbs = self._access.scope_for(actor, kbs)
        self._audited(actor, question, kbs, None, mode="test case")
        return self._ask(question, (), kbs, "", None, None)

    def _ask(
        self,
        question: str,
        history: Sequence[ChatTurn],
        kbs: Scope,
        summary: str,
        clarified: Clarified | None,
        mode: Mode | None,
        docs: Docs = None,
        recall: Recall | None = None,
    ) -> Iterator[EngineEvent]:
        refusal = question_refusal(question, self._settings.workflow.max_question_chars)
        if refusal is None and docs is not None and not docs:
            refusal = said_as(question, NO_MATCH, "没有文档符合筛选条件，未进行检索。请放宽条件，或检查标签和路径。")
        if refusal is not None:  # before any model call or search: nothing to answer, or too much to embed
            yield NoticeEvent(refusal, level="warning")
            yield AnswerEvent(refusal, (), grounded=False)
            return
        still = self._indexing(kbs)
        if still:  # its passages not yet embedded are found by keywords only
            yield NoticeEvent.worded(Said("enrich.still_indexing", {"kbs": still}))
        recall = recall or Recall()
        yield from recall.events(question)
        remembered = recall.texts
        mode = mode or self._settings.agent.mode
        steering = self._steering(question, mode) if clarified is None else Steering()
        if steering.event is not None:
            yield steering.event
        if clarified is None and mode == "auto":
            chosen, why = steering.mode or choose_mode(question)
            name = {"agent": "智能体", "workflow": "工作流"}[chosen]
            yield ModeEvent(chosen, said_as(question, f"Auto chose {chosen}: {why}", f"自动模式选择了{name}：{why}"))
            mode = chosen
        if clarified is None and mode == "agent":
            yield from self._agent.ask(
                question, history, kbs, summary=summary, docs=docs, memories=remembered, order=steering.tool_order
            )
            return
        yield from self._answers.ask(
            question, history, kbs, summary=summary, clarified=clarified, docs=docs, memories=remembered
        )

    def _steering(self, question: str, mode: Mode) -> Steering:
        """What procedural memory changes for ``question`` (nothing when it is off): Auto's mode, the agent's
        tool order."""
        if self._procedural is None or mode == "workflow":
            return Steering()
        rule = choose_mode(question) if mode == "auto" else None
        return self._procedural.steer(question, rule, self._agent.tool_names)

    def retrieve(
        self,
        question: str,
        kbs: Scope = None,
        *,
        actor: Actor = LOCAL_ACTOR,
        where: DocumentFilter | None = None,
        channels: Sequence[str] | None = None,
    ) -> RetrievalResult:
        """The chunks ``question`` would be answered from, with everything the trace shows about them; like
        ``ask``, only from the knowledge bases ``actor`` may read and the documents ``where`` admits, found by
        the named ``channels`` (None: all)."""
        self._audit.require(actor, Action.CHAT, AuditAction.SEARCH, _scope(kbs), mode="retrieve")
        if self._access is not None:
            kbs = self._access.scope_for(actor, kbs)
        self._audited(actor, question, kbs, where, mode="retrieve")
        docs = self._retrieval.documents_matching(where, kbs) if where is not None else None
        return self._retrieval.retrieve(question, kbs, channels=channels, docs=docs)

    def _audited(self, actor: Actor, question: str, kbs: Scope, where: DocumentFilter | None, mode: str) -> None:
        """Record who searched which knowledge bases (the scope as narrowed to what they may read)."""
        detail = {"mode": mode, "kbs": sorted(kbs) if kbs is not None else None, "filtered": where is not None or None}
        if self._audit.log_questions:
            detail["question"] = question
        self._audit.record(actor, AuditAction.SEARCH, _scope(kbs), detail=detail)

    def _suggesting(
        self, events: Iterator[EngineEvent], question: str, before: Sequence[str] = ()
    ) -> Iterator[EngineEvent]:
        """``events``, then (the answer has ended: they never delay it) the next questions to offer, none on a
        topic ``question`` or the chat's earlier questions (``before``) named."""
        answer = None
        for event in events:
            if isinstance(event, AnswerEvent):
                answer = event
            yield event
        if self._window is None:
            return
        try:
            questions = suggested(question, answer, self._window, before=before, written=self._written)
        except Exception:  # only the buttons are lost
            log.warning("the next questions could not be made", exc_info=True)
            return
        if questions:
            yield SuggestionsEvent(questions)


def _offering(events: Iterator[EngineEvent], memories: Memories, owner: str, question: str) -> Iterator[EngineEvent]:
    """``events``, then (once the answer is out: the offer never delays it) what might be worth remembering."""
    yield from events
    offered = memories.offer(owner, question)
    if offered is not None:
        yield offered


def question_refusal(question: str, max_chars: int) -> str | None:
    """Why ``question`` is not asked at all (blank, or longer than ``max_chars``), in the question's language;
    None when it is asked."""
    text = question.strip()
    if not text:
        return "Type a question first. · 请先输入问题。"
    if len(text) > max_chars:
        if is_chinese(text):
            return (
                f"问题太长（{len(text):,} 个字符，上限 {max_chars:,}）。请缩短问题；长文本请作为文档上传。"
                "（RAGAPP_WORKFLOW__MAX_QUESTION_CHARS）"
            )
        return (
            f"This question is {len(text):,} characters long; questions are limited to {max_chars:,} "
            "(RAGAPP_WORKFLOW__MAX_QUESTION_CHARS). Shorten it, or upload long text as a document."
        )
    return None


def _scope(kbs: Scope) -> str:
    """A search's scope as the audit log's target: the knowledge bases, or "(all)"."""
    return "(all)" if kbs is None else ", ".join(sorted(kbs)) or "(none)"
