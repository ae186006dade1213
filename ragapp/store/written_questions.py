"""The questions the model wrote for each chunk, kept in the catalog's database beside the chunks they lead to.

Two tables (``ragapp.store.catalog_schema``): ``written_questions`` holds every question written, kept or dropped
by the grounding check (with the score it got, so the check can be measured again without the model), and
``question_runs`` the chunks written for (a chunk whose questions were all dropped is done too). Both reference
their chunk with ``ON DELETE CASCADE``: a deleted document, or a replaced one (its chunks get new ids), takes its
questions with it in the same transaction. Writes bump the meta key ``questions_version``, not the catalog's own
version: a question written must not make every derived index of the chunks stale (the keyword index of all
chunks would be rebuilt after each batch); what is derived from the questions reads this version instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ragapp.db import Database
from ragapp.store.catalog import utc_now

_VERSION_KEY = "questions_version"
_BUMP = (
    f"INSERT INTO meta (key, value) VALUES ('{_VERSION_KEY}', '1') ON CONFLICT (key) "
    "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)"
)
_PLACES = 500  # ids per ``IN (...)``: well under either engine's limit on parameters


@dataclass(frozen=True)
class WrittenQuestion:
    """One question written for ``chunk_id``: its ``lang``, whether the grounding check ``kept`` it, and the
    score it read (None: not checked)."""

    chunk_id: str
    text: str
    lang: str
    kept: bool = True
    score: float | None = None


@dataclass(frozen=True)
class IndexedQuestion:
    """A kept question with what a scoped search needs: its chunk's document and knowledge base."""

    chunk_id: str
    ordinal: int
    text: str
    lang: str
    doc_id: str
    kb: str


class WrittenQuestions:
    """Reads and writes the written questions in ``database`` (the catalog's; its tables are made by the
    catalog's ``start``)."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def version(self) -> int:
        """Bumped by every write (read afresh: another replica may have written)."""
        row = self._db.one("SELECT value FROM meta WHERE key = ?", (_VERSION_KEY,))
        return int(row[0]) if row is not None else 0

    def pending(self, kb: str) -> list[str]:
        """The chunks of knowledge base ``kb`` with no questions written yet, in document and reading order."""
        rows = self._db.query(
            "SELECT c.chunk_id FROM chunks c JOIN documents d ON d.doc_id = c.doc_id "
            "LEFT JOIN question_runs r ON r.chunk_id = c.chunk_id "
            "WHERE d.kb = ? AND r.chunk_id IS NULL ORDER BY d.added_at, d.doc_id, c.ordinal",
            (kb,),
        )
        return [str(r[0]) for r in rows]

    def write(self, chunk_id: str, questions: Sequence[WrittenQuestion], model: str) -> bool:
        """Replace ``chunk_id``'s questions with ``questions`` and mark it written; False (nothing written) when
        the chunk is no longer in the catalog."""
        with self._db.transaction() as tx:
            if tx.one("SELECT 1 FROM chunks WHERE chunk_id = ?", (chunk_id,)) is None:
                return False
            tx.execute("DELETE FROM written_questions WHERE chunk_id = ?", (chunk_id,))
            tx.execute("DELETE FROM question_runs WHERE chunk_id = ?", (chunk_id,))
            tx.many(
                "INSERT INTO written_questions (chunk_id, ordinal, lang, text, score, kept) VALUES (?, ?, ?, ?, ?, ?)",
                [(chunk_id, i, q.lang, q.text, q.score, int(q.kept)) for i, q in enumerate(questions)],
            )
            tx.execute(
                "INSERT INTO question_runs (chunk_id, model, written_at) VALUES (?, ?, ?)", (chunk_id, model, utc_now())
            )
            tx.execute(_BUMP)
        return True

    def forget(self, chunk_ids: Iterable[str]) -> None:
        """Drop the questions of ``chunk_ids`` (those of a deleted chunk went with it already)."""
        ids = list(chunk_ids)
        with self._db.transaction() as tx:
            for start in range(0, len(ids), _PLACES):
                part = ids[start : start + _PLACES]
                places = ", ".join("?" * len(part))
                tx.execute(f"DELETE FROM written_questions WHERE chunk_id IN ({places})", part)
                tx.execute(f"DELETE FROM question_runs WHERE chunk_id IN ({places})", part)
            tx.execute(_BUMP)

    def of_chunk(self, chunk_id: str, kept_only: bool = True) -> list[WrittenQuestion]:
        """``chunk_id``'s questions in the order written."""
        rows = self._db.query(
            "SELECT chunk_id, text, lang, kept, score FROM written_questions WHERE chunk_id = ?"
            + (" AND kept = 1" if kept_only else "")
            + " ORDER BY ordinal",
            (chunk_id,),
        )
        return [
            WrittenQuestion(str(c), str(t), str(lg), bool(k), None if s is None else float(s))
            for c, t, lg, k, s in rows
        ]

    def kept_of(self, chunk_ids: Iterable[str], lang: str) -> dict[str, list[str]]:
        """The kept questions in ``lang`` of each of ``chunk_ids`` that has some, in the order written."""
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[str, list[str]] = {}
        for start in range(0, len(ids), _PLACES):
            part = ids[start : start + _PLACES]
            places = ", ".join("?" * len(part))
            rows = self._db.query(
                f"SELECT chunk_id, text FROM written_questions WHERE chunk_id IN ({places}) AND kept = 1 "
                "AND lang = ? ORDER BY chunk_id, ordinal",
                (*part, lang),
            )
            for chunk_id, text in rows:
                found.setdefault(str(chunk_id), []).append(str(text))
        return found

    def all_written(self) -> list[WrittenQuestion]:
        """Every question written, kept or not (for measuring the grounding check)."""
        rows = self._db.query(
            "SELECT chunk_id, text, lang, kept, score FROM written_questions ORDER BY chunk_id, ordinal"
        )
        return [
            WrittenQuestion(str(c), str(t), str(lg), bool(k), None if s is None else float(s))
            for c, t, lg, k, s in rows
        ]

    def indexed(self) -> list[IndexedQuestion]:
        """Every kept question, with its chunk's document and knowledge base (what the question index holds)."""
        rows = self._db.query(
            "SELECT q.chunk_id, q.ordinal, q.text, q.lang, c.doc_id, d.kb FROM written_questions q "
            "JOIN chunks c ON c.chunk_id = q.chunk_id JOIN documents d ON d.doc_id = c.doc_id "
            "WHERE q.kept = 1 ORDER BY q.chunk_id, q.ordinal"
        )
        return [IndexedQuestion(str(c), int(o), str(t), str(lg), str(doc), str(kb)) for c, o, t, lg, doc, kb in rows]

    def written_ids(self) -> set[str]:
        """The chunks written for."""
        return {str(r[0]) for r in self._db.query("SELECT chunk_id FROM question_runs")}


def _question(row: tuple[object, ...]) -> WrittenQuestion:
    chunk_id, text, lang, kept, score = row
    return WrittenQuestion(str(chunk_id), str(text), str(lang), bool(kept), None if score is None else float(score))  # type: ignore[arg-type]


def written_reader(questions: WrittenQuestions) -> Callable[[Sequence[str], bool], dict[str, list[str]]]:
    """``(chunk ids, Chinese?) -> kept questions by chunk``, as the next questions' rules read them
    (``ragapp.qa.suggest.Written``)."""
    return lambda chunk_ids, chinese: questions.kept_of(chunk_ids, "zh" if chinese else "en")
