"""The memories facet: what each user asked the assistant to remember, to list, edit, delete and recall.

A memory comes from the user's own words: "remember that I use the V2 Pro" (kept at once, with a confirmation in
the chat), or an offer after an answer ("I use the V2 Pro, how long does the battery last?" offers "I use the V2
Pro") that the user accepted. It is screened like document text before it is kept (``qa.remember``). For each
question the asker's memories are recalled by relevance (the embedder, ``memory.min_similarity`` and
``memory.min_question_words``: ``qa.memory_recall``) from their own Chroma collection (``store.memory_vectors``)
and go into a separate part of the prompt; the question's steps and trace say which were used. Every call names
the owner (``user:<name>``, or a browser's id with accounts off): one user's memories never reach another's
prompt, trace, page or API call.

``memory.enabled`` off turns everything here off; each user can also turn memory off for themselves.
"""

from __future__ import annotations

import builtins
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from ragapp.config import Settings
from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.events import (
    AnswerEvent,
    EngineEvent,
    NoticeEvent,
    ProposalEvent,
    Recalled,
    RecallEvent,
    RememberedEvent,
    StageEvent,
    TokenEvent,
)
from ragapp.core.lang import said_as
from ragapp.core.said import Said
from ragapp.models.embedders import Embedder
from ragapp.models.llm import LLM
from ragapp.qa.memory_recall import RecallRule, names_something, recalled
from ragapp.qa.remember import RememberJudge, proposal, remember_command, rules_cannot_tell, screened
from ragapp.store.memories import Memory, MemoryStore, Source
from ragapp.store.memory_vectors import MemoryVectors

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recall:
    """The memories recalled for one question, and how long finding them took."""

    memories: tuple[Recalled, ...] = ()
    seconds: float = 0.0
    error: str | None = None  # recalling failed: the answer goes on without memories, and says so

    def events(self, question: str = "") -> Iterator[EngineEvent]:
        """The recall's stage (for the trace) and the typed event (for the chat's steps and the API)."""
        if self.error is not None:
            yield StageEvent("recall", "failed", self.seconds, error=self.error)
            english = "Your memories could not be recalled; this answer does not use them."
            yield NoticeEvent(said_as(question, english, "无法读取你的记忆，这个回答没有用到它们。"), "warning")
            return
        if not self.memories:
            return
        detail = {
            "memories": [m.text for m in self.memories],
            "similarity": [round(m.similarity, 3) for m in self.memories],
        }
        yield StageEvent("recall", "finished", self.seconds, detail)
        yield RecallEvent(self.memories)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(m.text for m in self.memories)


class Memories:
    def __init__(
        self,
        settings: Settings,
        store: MemoryStore | None,
        vectors: MemoryVectors | None,
        embedder: Embedder | None,
        llm: LLM | None = None,
    ) -> None:
        self._settings = settings.memory
        # Asked only when the rules cannot tell whether a message asks to remember (None: never).
        self._judge = RememberJudge(llm, settings.workflow.step_timeout_s) if llm is not None else None
        self._store = store  # None: memory off for the app
        self._vectors = vectors
        self._embedder = embedder
        self._lock = threading.Lock()  # a row and its vector change together
        self._rule = RecallRule(settings.memory.min_similarity, settings.memory.min_question_words)

    @property
    def on(self) -> bool:
        """Memory is on for the app (``memory.enabled``)."""
        return self._store is not None and self._vectors is not None and self._embedder is not None

    def enabled_for(self, owner: str) -> bool:
        """On for the app and not turned off by ``owner``."""
        return self._store is not None and self.on and self._store.enabled(owner)

    def set_enabled(self, owner: str, enabled: bool, *, actor: Actor = LOCAL_ACTOR) -> None:
        """Turn memory on or off for ``owner`` (kept memories stay, unused, while it is off)."""
        require(actor, Action.CHAT)
        if self._store is not None:
            self._store.set_enabled(owner, enabled)

    def list(self, owner: str, *, actor: Actor = LOCAL_ACTOR) -> builtins.list[Memory]:
        """``owner``'s memories, the newest first."""
        require(actor, Action.CHAT)
        return self._store.list(owner) if self._store is not None else []

    def add(self, owner: str, text: str, source: Source = "accepted", *, actor: Actor = LOCAL_ACTOR) -> RememberedEvent:
        """Keep ``text`` for ``owner`` (screened first); the event says what was kept, or why nothing was."""
        require(actor, Action.CHAT)
        refusal = self._refusal(text)
        if refusal is not None:
            return _not_kept(text, refusal)
        assert self._store is not None and self._vectors is not None and self._embedder is not None
        kept = screened(text)
        if kept.refused:
            return _not_kept(text, _ONLY_INSTRUCTIONS, kept.cut)
        with self._lock:
            memory = self._store.add(owner, kept.text, source, bool(kept.cut), self._settings.max_per_user)
            if memory is None:
                return _not_kept(text, Said("remember.full", {"limit": self._settings.max_per_user}))
            self._vectors.put(memory.id, owner, self._embedder.embed_passages([kept.text])[0])
        return RememberedEvent(kept.text, memory.id, kept.cut)

    def edit(self, owner: str, memory_id: str, text: str, *, actor: Actor = LOCAL_ACTOR) -> RememberedEvent:
        """Change one of ``owner``'s memories (screened as a new one is); a refusal (``memory_id`` "") leaves it
        as it was."""
        require(actor, Action.CHAT)
        refusal = self._refusal(text)
        if refusal is not None:
            return _not_kept(text, refusal)
        assert self._store is not None and self._vectors is not None and self._embedder is not None
        kept = screened(text)
        if kept.refused:
            return _not_kept(text, _ONLY_INSTRUCTIONS, kept.cut)
        with self._lock:
            if not self._store.edit(owner, memory_id, kept.text, bool(kept.cut)):
                return _not_kept(text, Said("remember.no_such"))
            self._vectors.put(memory_id, owner, self._embedder.embed_passages([kept.text])[0])
        return RememberedEvent(kept.text, memory_id, kept.cut)

    def delete(self, owner: str, memory_id: str, *, actor: Actor = LOCAL_ACTOR) -> bool:
        """Forget one of ``owner``'s memories (its vector too): it is never recalled again."""
        require(actor, Action.CHAT)
        if self._store is None or self._vectors is None:
            return False
        with self._lock:
            if not self._store.delete(owner, memory_id):
                return False
            self._vectors.delete([memory_id])
        return True

    # -- in a question ---------------------------------------------------------------------------

    def command(self, owner: str, question: str) -> Iterator[EngineEvent] | None:
        """The turn answering "remember that X" (X kept at once and confirmed); None when ``question`` is no
        such request or memory is off for the app (then it is asked as any question). The rules decide; the
        model only where they cannot tell (``qa.remember``), and then its step is in the turn."""
        if not self.on:
            return None
        what = remember_command(question)
        judged: StageEvent | None = None
        if what is None and self._judge is not None and rules_cannot_tell(question):
            verdict = self._judge.judge(question)
            what = verdict.what
            detail = {"remember": what is not None}
            judged = (
                StageEvent("remember", "failed", verdict.seconds, detail, verdict.error)
                if verdict.error is not None
                else StageEvent("remember", "finished", verdict.seconds, detail)
            )
            if what is None:
                log.info("the model judged %r no request to remember (%s)", question[:80], verdict.error or "no")
        if what is None:
            return None
        return self._kept_turn(owner, question, what, judged)

    def _kept_turn(
        self, owner: str, question: str, what: str, judged: StageEvent | None = None
    ) -> Iterator[EngineEvent]:
        if judged is not None:
            yield judged
        if self._store is not None and not self._store.enabled(owner):
            event = _not_kept(what, Said("remember.off_user"))
        else:
            event = self.add(owner, what, "said")
        yield event
        if event.cut:
            yield NoticeEvent(_cut_notice(question, event), level="warning")
        text = _confirmation(question, event)
        yield TokenEvent(text)
        yield AnswerEvent(text, (), grounded=False)

    def recall(self, owner: str, question: str) -> Recall:
        """``owner``'s memories relevant to ``question`` (best first, at most ``memory.max_recalled``); none
        when memory is off for them, they have none, or recalling fails (the answer goes on without)."""
        if not self.on:
            return Recall()
        assert self._store is not None and self._vectors is not None and self._embedder is not None
        start = time.perf_counter()
        try:
            if not self._store.enabled(owner) or self._store.count(owner) == 0:
                return Recall()
            if not names_something(question, self._rule):  # "hello": nothing a memory could matter to
                return Recall(seconds=time.perf_counter() - start)
            vector = self._embedder.embed_queries([question])[0]
            hits = self._vectors.search(owner, vector, self._settings.max_recalled * 2)
            found: list[Recalled] = []
            for memory_id, similarity in recalled(question, hits, self._rule):
                memory = self._store.get(owner, memory_id)
                if memory is not None:  # the row is the truth: a vector left behind is never recalled
                    found.append(Recalled(memory.id, memory.text, similarity, memory.created_at))
        except Exception as exc:  # a store or the embedder failing costs the memories, never the answer
            log.warning("recalling memories failed; answering without them", exc_info=True)
            return Recall(seconds=time.perf_counter() - start, error=f"{type(exc).__name__}: {exc}")
        return Recall(tuple(found[: self._settings.max_recalled]), time.perf_counter() - start)

    def offer(self, owner: str, question: str) -> ProposalEvent | None:
        """After the answer: a clause of the user's own ``question`` worth remembering (``qa.remember``), unless
        offers are off, memory is off for them, or they already keep it."""
        text = proposal(question) if self._settings.propose and self.on else None
        if text is None or self._store is None:
            return None
        try:
            if not self._store.enabled(owner):
                return None
            known = {" ".join(m.text.lower().split()) for m in self._store.list(owner)}
        except Exception:  # after the answer: a store failing costs only the offer
            log.warning("could not look at the memories to offer one", exc_info=True)
            return None
        return None if " ".join(text.lower().split()) in known else ProposalEvent(text)

    def _refusal(self, text: str) -> Said | None:
        if self._store is None or not self.on:
            return Said("remember.off_app")
        if not text.strip():
            return Said("remember.nothing")
        if len(text) > self._settings.max_chars:
            return Said("remember.too_long", {"limit": self._settings.max_chars})
        return None


_ONLY_INSTRUCTIONS = Said("remember.only_instructions")


def _not_kept(text: str, why: Said, cut: tuple[str, ...] = ()) -> RememberedEvent:
    return RememberedEvent(text, cut=cut, reason=why.english, said=why)


def _confirmation(question: str, event: RememberedEvent) -> str:
    """The short reply to "remember that ...", in the question's language."""
    if not event.memory_id:
        why = event.said.worded(chinese=True) if event.said is not None else None
        return said_as(question, f"I did not keep that. {event.reason}", f"没有记住。{why or event.reason}")
    return said_as(
        question,
        f"Got it, I will remember: “{event.text}”. You can see, edit or delete it under Memory in the chats sidebar.",
        f"好的，我会记住：“{event.text}”。可以在侧栏的“记忆”中查看、修改或删除。",
    )


def _cut_notice(question: str, event: RememberedEvent) -> str:
    first = event.cut[0] if len(event.cut[0]) <= 160 else event.cut[0][:160] + "…"
    return said_as(
        question,
        f"{len(event.cut)} sentence(s) addressed to the assistant (“{first}”) were left out of the memory: "
        "instructions are never kept.",
        f"有 {len(event.cut)} 句写给助手的指令（如“{first}”）没有被记住：指令不会保存。",
    )
