"""Workflow mode: question -> streamed, cited answer, top to bottom, as a stream of engine events.

fold old turns into a summary -> rewrite into a standalone question and split it -> route each part
through the intent tree (ask back when ambiguous; answer messages to the assistant directly) -> retrieve
each part in its intents' knowledge bases -> fit passages and conversation into the token budget -> stream
the answer and map [n] back to chunks, or say the knowledge base does not hold it.

Every model call may fail, hang or return garbage: each step then falls back (the question as asked, no
intent, the passages without an answer) and says so; the user always gets the rest.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import TypeVar

from ragapp.config import Settings
from ragapp.core.events import (
    AnswerEvent,
    ClarifyEvent,
    EngineEvent,
    MemoryEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    StageEvent,
    TokenEvent,
    WaitEvent,
)
from ragapp.core.lang import is_chinese
from ragapp.core.said import Said
from ragapp.core.stages import begin
from ragapp.core.types import ChatTurn, Docs, LeafScore, RetrievalResult, RetrievedChunk, Scope
from ragapp.models.llm import LLM, holds_grammar, stream_within
from ragapp.models.model_queue import Outcome, run_observed
from ragapp.qa.budget import fit_lines, fold_plan, plan_budget
from ragapp.qa.early_evidence import EarlyEvidence
from ragapp.qa.history_fold import fold, turns_to_fold
from ragapp.qa.parts import SEARCH_ALL, Clarified, Part, merge_results, retrieve_detail
from ragapp.qa.prompt_fit import FittedPrompt, fit_prompt
from ragapp.qa.prompts import (
    answer_messages,
    answer_slot,
    clarify_text,
    memory_block,
    system_messages,
)
from ragapp.qa.remember import choice_from_memories
from ragapp.qa.rephrase import QuestionRephraser, needs_rephrasing
from ragapp.qa.rewrite import QuestionPlan, QuestionPlanner, found_as_asked, has_words_of_its_own, looks_multi_part
from ragapp.qa.select import selection_messages, selection_slot
from ragapp.qa.translate import QuestionTranslator, needs_translation, translation_skip_reason
from ragapp.qa.widen import routing_event, widened, with_uncovered
from ragapp.qa.writer import AnswerWriter, Steps
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.router.decide import RoutingDecision
from ragapp.router.router import IntentRouter

log = logging.getLogger(__name__)

T = TypeVar("T")


class AnswerPipeline:
    def __init__(self, retrieval: RetrievalPipeline, llm: LLM, router: IntentRouter, settings: Settings) -> None:
        self._retrieval = retrieval
        self._llm = llm
        self._router = router
        self._settings = settings
        self._planner = QuestionPlanner(llm, settings.workflow.step_timeout_s, settings.workflow.max_sub_questions)
        self._translator = QuestionTranslator(llm, settings.workflow.step_timeout_s)
        self._rephraser = QuestionRephraser(llm, settings.workflow.step_timeout_s)
        self._writer = AnswerWriter(llm, retrieval.reranker, settings)

    def ask(
        self,
        question: str,
        history: Sequence[ChatTurn] = (),
        kbs: Scope = None,
        *,
        summary: str = "",
        clarified: Clarified | None = None,
        docs: Docs = None,
        memories: Sequence[str] = (),
    ) -> Iterator[EngineEvent]:
        """Answer ``question`` from the knowledge bases ``kbs`` (None: all of them) and, with a document filter,
        only from the documents ``docs``. ``summary`` folds the turns before ``history``; ``clarified`` resumes
        a question the app asked back about; ``memories``, the asker's recalled memories, go into the answer's
        (or the direct reply's) prompt in a part of their own."""
        question = question.strip()
        history = list(history)
        summary, history = yield from self.remember(summary, history)

        if clarified is not None:
            picked = clarified.sub_questions or (question,)
            plan = QuestionPlan(question, question, picked, answer_parts=picked if len(picked) > 1 else ())
        else:
            plan = yield from self._plan(question, history, summary, kbs, docs)
        if plan.changed:
            yield RewriteEvent(question, plan.standalone, plan.sub_questions)

        early = EarlyEvidence(docs) if self._settings.workflow.show_evidence else None
        parts: list[Part] = []
        for sub_question in plan.sub_questions:
            decision = yield from self._route(sub_question, clarified, kbs, early, memories)
            if decision.action == "clarify":
                yield from early.withdrawn("the app asks back") if early is not None else ()
                yield from self._ask_back(plan, decision)
                return
            parts.append(replace(self._part(sub_question, decision, kbs), docs=docs))

        asked = self._with_choice(plan.standalone, parts)
        system_parts = [p for p in parts if p.decision.action == "system"]
        if system_parts and len(system_parts) == len(parts):
            yield from early.withdrawn("a message to the assistant, answered directly") if early is not None else ()
            yield from self._reply_directly(asked, system_parts[0].decision.intents[0], history, summary, memories)
            return
        knowledge_parts = [p for p in parts if p.decision.action != "system"]
        if len(knowledge_parts) > 1:
            answer_parts = tuple(p.question for p in knowledge_parts)
        else:
            answer_parts = plan.answer_parts if len(parts) == 1 else ()
        answering = self._answer(asked, knowledge_parts, kbs, history, summary, answer_parts, memories)
        yield from early.settling(answering) if early is not None else answering

    def warm_up(self) -> None:
        """Have the model read the answer instructions of each language into their contexts (``_write``), and the
        selection's (``select``) when it is on, so the first answers read only their passages and question. A
        failure only means a slower first answer."""
        for question in ("What is it?", "这是什么？"):
            messages = answer_messages(question, (), ())
            slots = [(messages, answer_slot(question))]
            if self._settings.workflow.select == "on" or (
                self._settings.workflow.select == "auto" and holds_grammar(self._llm)
            ):
                slots.append((selection_messages(messages, question), selection_slot(question)))
            for prompt, slot in slots:
                try:
                    call = partial(self._llm.stream_chat, prompt, max_tokens=1, prefix_slot=slot)
                    "".join(stream_within(call, 120))
                except Exception:
                    log.warning("warming up the answer instructions failed", exc_info=True)
                    return

    # -- steps ---------------------------------------------------------------------------------

    def _in_line(self, call: Callable[[], T], meanwhile: Iterable[EngineEvent] = ()) -> Steps[T]:
        """``call()``, saying (``WaitEvent``) while a model call inside it waits in the model's queue: a step
        that needs the model (rewrite, routing, translation) may wait behind other users' answers. The events
        of ``meanwhile`` are made (and passed on) while ``call`` runs on its worker, before its waits."""
        start = time.perf_counter()
        observed = run_observed(call)  # started: ``meanwhile`` runs beside it
        yield from meanwhile
        for item in observed:
            if isinstance(item, Outcome):
                return item.get()
            yield WaitEvent(item, time.perf_counter() - start)
        raise AssertionError("run_observed ends with the outcome")

    def remember(self, summary: str, history: list[ChatTurn]) -> Steps[tuple[str, list[ChatTurn]]]:
        """Fold the turns beyond the recent window, and those the conversation's token share cannot hold
        (``budget.history``), into the summary (a ``MemoryEvent`` tells the caller); returns the summary and
        the turns kept verbatim. Agent mode uses it too."""
        wf = self._settings.workflow
        recent = turns_to_fold(history, wf.recent_turns)
        count, chars = fold_plan(self._settings, summary, history)
        if count == 0:
            return summary, history
        stage = yield from begin("memory")
        folded = fold(self._llm, summary, history[:count], chars, wf.step_timeout_s, 300)
        detail: dict[str, object] = {"turns folded": count}
        if count > recent:
            detail["over budget"] = f"{count - recent} more messages folded, summary within {chars} characters"
        if folded.error is not None:
            yield stage.failed(folded.error, detail)
        else:
            yield stage.finished(detail)
        yield MemoryEvent(folded.summary, folded.folded)
        return folded.summary, history[count:]

    def _plan(
        self, question: str, history: list[ChatTurn], summary: str, kbs: Scope = None, docs: Docs = None
    ) -> Steps[QuestionPlan]:
        wf = self._settings.workflow
        if not wf.rewrite:
            return self._planner.split(question)  # by its wording: no model call
        why_not = self._planner.skip_reason(question, history, summary, multi_part=wf.rewrite_multi_part)
        rule = "skipped.parts_by_wording" if looks_multi_part(question) else "skipped.stands_alone"
        strong_skip = wf.rewrite_above_score is not None and has_words_of_its_own(question)
        if why_not is None and strong_skip:  # the answer's search, kept by its cache
            search = partial(self._retrieval.retrieve, question, kbs, docs=docs)
            why_not, rule = found_as_asked(search, wf.rewrite_above_score or 0.0), "skipped.strong_search"
        if why_not is not None:
            if history or summary:  # in a conversation, say why the follow-up was not rewritten
                yield StageEvent("rewrite", "finished", None, {"model call": "none", "rule": rule, "why": why_not})
            return self._planner.split(question)
        stage = yield from begin("rewrite")
        plan = yield from self._in_line(lambda: self._planner.plan(question, history, summary))
        if plan.error is not None:
            yield stage.failed(plan.error)
        else:
            yield stage.finished({"question": plan.standalone, "parts": len(plan.sub_questions)})
        return plan

    def _route(
        self,
        question: str,
        clarified: Clarified | None,
        kbs: Scope,
        early: EarlyEvidence | None = None,
        memories: Sequence[str] = (),
    ) -> Steps[RoutingDecision]:
        """Route one part; one the asker's memories settle (``choice_from_memories``) is not asked back about."""
        routing_on = self._settings.workflow.route and bool(self._router.tree().leaves())
        stage = (yield from begin("route")) if routing_on else None
        if clarified is not None and question == clarified.ambiguous:
            decision = self._resolve(RoutingDecision(question, "clarify", (), ()), clarified.choice)
        else:
            decided = self._router.route_without_model(question, kbs)
            if decided is None:  # the classifier's model call: search the whole scope meanwhile
                meanwhile = self._search_early(question, kbs, early) if early is not None else ()
                decided = yield from self._in_line(lambda: self._router.route_by_model(question, kbs), meanwhile)
            decision = decided
            if clarified is not None and decision.action == "clarify":  # another ambiguous part: same pick
                decision = self._resolve(decision, clarified.choice)
            decision = self._within_scope(decision, kbs)
            settled = choice_from_memories(decision.intents, memories) if decision.action == "clarify" else None
            if settled is not None:
                why = Said("routing.memory", {"memory": settled[1], "label": settled[0].label})
                decision = replace(self._resolve(decision, settled[0].code), said=(why,))
            fit_min = self._settings.workflow.route_fit_min
            decision = with_uncovered(decision, partial(self._router.uncovered, kbs), fit_min)
        if stage is not None:
            classification = decision.classification
            error = classification.error if classification is not None else None
            detail = {"decision": decision.action, "intents": [i.path for i in decision.intents]}
            if decision.also:
                detail["also searched"] = list(decision.also)
            yield stage.finished(detail, error)
        yield routing_event(decision, self._settings.workflow.route_fit_min)
        return decision

    def _search_early(self, question: str, kbs: Scope, early: EarlyEvidence) -> Iterator[EngineEvent]:
        """The best sentence of the general search (the user's whole scope and filter), shown at once and
        marked early (see ``early_evidence``); once per question."""
        if early.searched:
            return
        early.searched = True
        stage = yield from begin("early search")
        try:
            result = self._retrieval.retrieve(question, kbs, docs=early.docs)
            evidence = self._writer.evidence(question, self._fit(question, result.chunks, (), "")[0].passages)
        except Exception as exc:  # only the early quote is lost: the answer's own search comes after routing
            log.warning("the search beside routing failed", exc_info=True)
            yield stage.failed(f"{type(exc).__name__}: {exc}")
            return
        yield stage.finished({"kbs": sorted(kbs) if kbs is not None else "all", "quote": evidence is not None})
        if evidence is not None:
            early.shown = replace(evidence, early=True)
            yield early.shown

    def _within_scope(self, decision: RoutingDecision, kbs: Scope) -> RoutingDecision:
        """Keep only intents that search the knowledge bases the user picked: asking back about (or routing
        to) a knowledge base outside the user's own choice helps no one."""
        if kbs is None or decision.action not in ("route", "clarify"):
            return decision
        tree = self._router.tree()
        inside = tuple(i for i in decision.intents if set(getattr(tree.get(i.code), "kbs", ())) & kbs)
        if len(inside) == len(decision.intents):
            return decision
        if decision.action == "clarify" and len(inside) > 1:
            return replace(decision, intents=inside)
        names = {"kbs": ", ".join(sorted(kbs))}
        if inside:
            kept = inside[: self._settings.workflow.max_intents]
            return decision.but(Said("routing.within_kbs", names), action="route", intents=kept)
        return decision.but(Said("routing.within_kbs_none", names), action="fallback", intents=())

    def _resolve(self, decision: RoutingDecision, choice: str) -> RoutingDecision:
        """Apply the user's pick to a question that is still ambiguous."""
        leaf = self._router.leaf(choice) if choice != SEARCH_ALL else None
        if leaf is None:
            why = Said("routing.user_all") if choice == SEARCH_ALL else Said("routing.choice_gone", {"choice": choice})
            return replace(decision, action="fallback", intents=(), said=(why,), chosen=True)
        why = Said("routing.user_chose", {"path": leaf.path})
        return replace(decision, action="route", intents=(leaf,), said=(why,), chosen=True)

    def _part(self, question: str, decision: RoutingDecision, kbs: Scope) -> Part:
        """Where a routed part is searched: its intents' knowledge bases within the user's scope (the user's
        pick wins when they do not overlap), with the largest top-k its intents ask for."""
        if decision.action != "route":
            return Part(question, decision, kbs, None)
        tree = self._router.tree()
        nodes = [n for n in (tree.get(i.code) for i in decision.intents) if n is not None]
        leaf_kbs = frozenset(kb for n in nodes for kb in n.kbs)
        scope = (leaf_kbs if kbs is None else (leaf_kbs & kbs or kbs)) | frozenset(decision.also)
        top_ks = [n.top_k for n in nodes if n.top_k is not None]
        if decision.chosen:
            question = f"{question} ({decision.intents[0].label})"  # the pick says what "it" was
        return Part(question, decision, scope or None, max(top_ks) if top_ks else None)

    def _with_choice(self, standalone: str, parts: list[Part]) -> str:
        chosen = [p for p in parts if p.decision.chosen and p.decision.action == "route"]
        if chosen and len(parts) == 1:
            return chosen[0].question
        return standalone

    def _ask_back(self, plan: QuestionPlan, decision: RoutingDecision) -> Iterator[EngineEvent]:
        text = clarify_text(plan.standalone, decision.intents)
        yield ClarifyEvent(plan.standalone, plan.sub_questions, decision.question, decision.intents)
        yield TokenEvent(text)
        yield AnswerEvent(text, (), grounded=False)

    def _reply_directly(
        self, question: str, intent: LeafScore, history: list[ChatTurn], summary: str, memories: Sequence[str] = ()
    ) -> Iterator[EngineEvent]:
        node = self._router.tree().get(intent.code)
        prompt = node.prompt if node is not None else None
        messages = system_messages(question, prompt, history, summary, memories, self._settings.memory.max_tokens)
        text = yield from self._writer.generate(messages, detail={"model": self._llm.name, "intent": intent.path})
        if text is None:
            text = (
                "你好！我可以根据知识库中的文档回答问题。"
                if is_chinese(question)
                else "Hello! I answer questions from the documents in your knowledge bases."
            )
            yield TokenEvent(text)
        yield AnswerEvent(text, (), grounded=False)

    def _answer(
        self,
        question: str,
        parts: list[Part],
        kbs: Scope,
        history: list[ChatTurn],
        summary: str,
        answer_parts: Sequence[str] = (),
        memories: Sequence[str] = (),
    ) -> Iterator[EngineEvent]:
        """Retrieve every part (in its intents' scope, widened to ``kbs`` when that holds nothing relevant),
        fit the passages and turns into the budget, and stream the cited answer (part by part for
        ``answer_parts``)."""
        stage = yield from begin("retrieve")
        results = []
        w = self._settings.workflow
        for part in parts:
            search = partial(self._search_part, part)
            result = yield from widened(question, part.kbs, kbs, search, partial(self._router.uncovered, kbs), w)
            if w.translate and needs_translation(part.question, result, w.translate_below_score):
                why_not = translation_skip_reason(part.question, result) if w.translate_only_if_other_kept else None
                if why_not is None:
                    result = yield from self._search_translated(part, result)
                else:
                    detail = {"model call": "none", "rule": "skipped.own_language", "why": why_not}
                    yield StageEvent("translate", "finished", None, detail)
            if w.rephrase and needs_rephrasing(result, w.rephrase_below_score):
                result = yield from self._search_rephrased(part, result)
            results.append(result)
        said = {m: s for r in results for m, s in r.degraded_said.items()}
        for message in dict.fromkeys(m for r in results for m in r.degraded):
            yield NoticeEvent(message, level="warning", said=said.get(message, ()))
        found = merge_results(results)
        fitted, kept_memories = self._fit(question, found, history, summary, memories)
        yield stage.finished(
            retrieve_detail(self._retrieval, parts, results, len(found), len(fitted.passages), fitted.detail())
        )
        yield RetrievalEvent(tuple(fitted.passages), tuple(dict.fromkeys(m for r in results for m in r.degraded)))
        yield from self._writer.write(
            question,
            fitted.passages,
            fitted.turns,
            fitted.summary,
            answer_parts,
            memories=kept_memories,
            condense_keep=fitted.condense_keep,
            fit=fitted.detail(),
        )

    def _search_part(self, part: Part, kbs: Scope) -> RetrievalResult:
        """``part``'s question searched in ``kbs`` (its own scope, or a wider one) with its top-k and filter."""
        return self._retrieval.retrieve(part.question, kbs, part.top_k, docs=part.docs)

    def _fit(
        self,
        question: str,
        passages: Sequence[RetrievedChunk],
        history: Sequence[ChatTurn],
        summary: str,
        memories: Sequence[str] = (),
    ) -> tuple[FittedPrompt, tuple[str, ...]]:
        """The answer prompt's parts within the budget table's shares (``prompt_fit``), and the memories (best
        first) that fit the memories' share."""
        instructions = answer_messages(question, (), ())[0].content + question
        memory_text = memory_block(memories, is_chinese(question), self._settings.memory.max_tokens)
        budget = plan_budget(self._settings, instructions, memories=memory_text)
        kept_memories = tuple(fit_lines(memories, budget.memories))
        keep = self._settings.workflow.condense_keep
        fitted = fit_prompt(question, budget, passages, history, summary, keep, memories=memory_text)
        return fitted, kept_memories

    def _search_translated(self, part: Part, result: RetrievalResult) -> Steps[RetrievalResult]:
        """``result`` with the passages found by the question translated into the other language before its
        own (which held nothing strong), at most as many as the part may use."""
        stage = yield from begin("translate")
        translation = yield from self._in_line(lambda: self._translator.translate(part.question))
        detail: dict[str, object] = {"into": translation.target, "question": translation.text or part.question}
        if translation.text is None:
            yield stage.failed(translation.error, detail, translation.said)
            return result
        yield stage.finished(detail)
        return self._searched_first(translation.text, part, result)

    def _search_rephrased(self, part: Part, result: RetrievalResult) -> Steps[RetrievalResult]:
        """``result`` with the passages found by the question and its hypothetical answer sentence before its
        own (which held nothing strong), at most as many as the part may use (see ``rephrase``)."""
        stage = yield from begin("rephrase")
        hypothesis = yield from self._in_line(lambda: self._rephraser.hypothesis(part.question))
        detail: dict[str, object] = {"sentence": hypothesis.text or ""}
        if hypothesis.text is None:
            yield stage.failed(hypothesis.error, detail)
            return result
        yield stage.finished(detail)
        return self._searched_first(hypothesis.query, part, result)

    def _searched_first(self, query: str, part: Part, result: RetrievalResult) -> RetrievalResult:
        """``result`` with the passages ``query`` finds in the same scope before its own, each once, at most as
        many as the part may use."""
        kbs = result.kbs if result.kbs is None else frozenset(result.kbs)
        found = self._retrieval.retrieve(query, kbs, part.top_k, docs=part.docs)
        limit = part.top_k or self._retrieval.settings.context_top_k
        both = {c.chunk.chunk_id: c for c in (*found.chunks, *result.chunks)}
        degraded = tuple(dict.fromkeys((*found.degraded, *result.degraded)))
        said = {**found.degraded_said, **result.degraded_said}
        return replace(result, chunks=tuple(both.values())[:limit], degraded=degraded, degraded_said=said)

    def answer_from(
        self,
        question: str,
        passages: Sequence[RetrievedChunk],
        history: Sequence[ChatTurn] = (),
        summary: str = "",
        memories: Sequence[str] = (),
    ) -> Iterator[EngineEvent]:
        """Stream a cited answer from passages found elsewhere (the agent's), within the token budget; the
        asker's recalled ``memories`` in their own part of the prompt."""
        fitted, kept_memories = self._fit(question, passages, history, summary, memories)
        yield RetrievalEvent(tuple(fitted.passages))
        yield from self._writer.write(
            question,
            fitted.passages,
            fitted.turns,
            fitted.summary,
            memories=kept_memories,
            condense_keep=fitted.condense_keep,
            fit=fitted.detail(),
        )
