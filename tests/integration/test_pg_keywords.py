"""PostgreSQL full-text keyword search on a real server: what it finds (English and Chinese, through our own
tokens), the knowledge-base scope, the incremental rebuild, queries that try to break the tsquery syntax, and
one index shared by every replica."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragapp.core.chunks import chunk_id_of, index_text
from ragapp.core.errors import ConfigError
from ragapp.core.types import Chunk
from ragapp.db import Database, open_database
from ragapp.store import pg_keywords
from ragapp.store.pg_keywords import RANKINGS, PgKeywordIndex, tsquery_literal, tsvector_literal

pytestmark = pytest.mark.integration

HOSTILE = [
    "a'b",
    "c\\d",
    "x&y|z!",
    "w:*",
    "(p)",
    "'",
    "\\",
    "''",
    "\\'",
    "a b",
    "中文'",
    "é",
    "!",
    "<->",
    ":A",
]


def chunk(doc: str, ordinal: int, text: str, source: str = "notes.txt") -> Chunk:
    return Chunk(chunk_id_of(doc, ordinal), doc, ordinal, text, source)


DOCS = [
    chunk("battery", 0, "The battery warranty lasts two years from the date of purchase.", "warranty.txt"),
    chunk("battery", 1, "Charging the battery overnight runs it down faster.", "charging.txt"),
    chunk("pump", 0, "Bleed the hydraulic pump before the first start.", "pump-manual.txt"),
    chunk("zh", 0, "电池的保修期为两年，自购买之日起计算。", "保修.txt"),
    chunk("zh", 1, "液压泵首次启动前需要排气。", "液压泵.txt"),
]


@pytest.fixture
def db(postgres_url: str) -> Iterator[Database]:
    database = open_database(postgres_url, pool_size=2)
    yield database
    database.close()


@pytest.fixture
def index(db: Database) -> PgKeywordIndex:
    built = PgKeywordIndex(db).start()
    built.rebuild(DOCS, version=1)
    return built


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [cid for cid, _ in hits]


@pytest.mark.parametrize("ranking", RANKINGS)
def test_english_questions_find_their_chunk_first_with_positive_descending_scores(db: Database, ranking: str) -> None:
    index = PgKeywordIndex(db, ranking=ranking).start()
    index.rebuild(DOCS, version=1)
    hits = index.search("How long is the battery warranty?", 10)
    assert ids(hits)[0] == "battery-0000"
    assert all(score > 0 for _, score in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    # Stemmed like bm25s: "running" finds "runs"; the file name is indexed too ("manual" is only in it).
    assert ids(index.search("running", 10)) == ["battery-0001"]
    assert ids(index.search("pump manual", 10))[0] == "pump-0000"
    assert index.search("zebra crossing", 10) == []


def test_chinese_questions_are_segmented_by_jieba_on_both_sides(index: PgKeywordIndex) -> None:
    assert ids(index.search("电池保修期多久？", 10))[0] == "zh-0000"
    assert ids(index.search("液压泵怎么排气", 10))[0] == "zh-0001"


def test_a_scanned_chunk_is_found_through_ocr_s_confusions(db: Database) -> None:
    from dataclasses import replace

    scanned = replace(chunk("scan", 0, "Call asnl_delete_structure on the asnl node.", "scan.pdf"), ocr_confidence=0.9)
    typed = chunk("typed", 0, "Call asnl_delete_structure on the asnl node.", "typed.txt")
    right = chunk("right", 0, "Call asn1_delete_structure on the asn1 node.", "manual.txt")
    index = PgKeywordIndex(db).start()
    index.rebuild([scanned, typed, right], version=1)
    assert set(ids(index.search("asn1", 10))) == {scanned.chunk_id, right.chunk_id}  # typed "asnl" is not asked


def test_a_rare_term_outweighs_a_common_one(db: Database) -> None:
    # One chunk holds the rare "omega", ten the common "alpha", once each: only IDF tells them apart. Its id
    # sorts last, so a tie would put it last.
    chunks = [chunk(f"a{i}", 0, f"alpha filler{i}") for i in range(10)] + [chunk("z", 0, "omega filler")]
    weighted, plain = PgKeywordIndex(db).start(), PgKeywordIndex(db, ranking="ts_rank").start()
    weighted.rebuild(chunks, 1)
    assert ids(weighted.search("alpha omega", 20))[0] == "z-0000"
    assert ids(plain.search("alpha omega", 20))[-1] == "z-0000"


def test_drawing_matches_from_the_rarer_terms_changes_no_result(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [chunk(f"c{i:03d}", 0, f"common filler{i % 7}" + (" rare" if i in (40, 80) else "")) for i in range(100)]
    index = PgKeywordIndex(db).start()
    index.rebuild(chunks, 1)
    narrowed = {k: index.search("common rare filler3", k) for k in (1, 2, 20, 100)}
    assert ids(narrowed[2]) == ["c080-0000", "c040-0000"] and len(narrowed[20]) == 20  # c080 holds filler3 too
    monkeypatch.setattr(pg_keywords, "COMMON_SHARE", 1.0)  # every term draws matches: every match is ranked
    assert {k: index.search("common rare filler3", k) for k in (1, 2, 20, 100)} == narrowed


def test_top_k_bounds_the_hits(index: PgKeywordIndex) -> None:
    assert len(index.search("battery pump 电池 液压泵", 2)) == 2
    assert index.search("battery", 0) == []


def test_a_scoped_search_only_returns_chunks_of_those_knowledge_bases(db: Database) -> None:
    index = PgKeywordIndex(db).start()
    chunks = [chunk("a", i, f"gearbox oil grade {i}") for i in range(5)] + [chunk("b", 0, "gearbox oil")]
    kb_of = {c.chunk_id: ("kb-b" if c.doc_id == "b" else "kb-a") for c in chunks}
    index.rebuild(chunks, 1, kb_of)
    assert ids(index.search("gearbox oil", 10, frozenset({"kb-b"}))) == ["b-0000"]
    assert len(index.search("gearbox oil", 10, frozenset({"kb-a"}))) == 5
    assert len(index.search("gearbox oil", 10, frozenset({"kb-a", "kb-b"}))) == 6
    assert index.search("gearbox oil", 10, frozenset({"nowhere"})) == []
    assert index.search("gearbox oil", 10, frozenset()) == []
    # Chunks kb_of does not name are in the default knowledge base.
    index.rebuild(chunks, 2)
    assert len(index.search("gearbox oil", 10, frozenset({"default"}))) == 6


def test_a_document_filter_draws_the_top_k_from_its_documents(db: Database) -> None:
    index = PgKeywordIndex(db).start()
    strong = [chunk("strong", i, "gearbox oil gearbox oil grade") for i in range(5)]
    weak = [chunk("weak", i, f"the gearbox note {i} among other words") for i in range(3)]
    index.rebuild(strong + weak, 1, {c.chunk_id: "kb-a" for c in strong + weak})
    assert {cid.split("-")[0] for cid in ids(index.search("gearbox oil", 3))} == {"strong"}
    assert ids(index.search("gearbox oil", 3, docs=frozenset({"weak"}))) == ["weak-0000", "weak-0001", "weak-0002"]
    assert len(index.search("gearbox oil", 10, frozenset({"kb-a"}), frozenset({"weak", "strong"}))) == 8
    assert index.search("gearbox oil", 3, frozenset({"kb-b"}), frozenset({"weak"})) == []
    assert index.search("gearbox oil", 3, docs=frozenset()) == []


def test_rows_from_before_documents_were_kept_learn_theirs_from_the_chunk_id(postgres_url: str) -> None:
    database = open_database(postgres_url, pool_size=1)
    try:
        database.ensure_schema("keywords", pg_keywords.SCHEMA_STEPS[:1])  # a database from the first release
        database.execute(
            "INSERT INTO keyword_terms (chunk_id, kb, digest, terms) VALUES (?, 'default', 'x', CAST(? AS tsvector))",
            (chunk_id_of("old-doc", 12), tsvector_literal(["gearbox"])),
        )
        index = PgKeywordIndex(database).start()  # applies the step that adds each row's document
        assert database.query("SELECT doc_id FROM keyword_terms") == [("old-doc",)]
        index.rebuild([chunk("old-doc", 12, "gearbox")], 1)
        assert ids(index.search("gearbox", 3, docs=frozenset({"old-doc"}))) == [chunk_id_of("old-doc", 12)]
    finally:
        database.close()


def _frequencies(db: Database) -> tuple[dict[str, int], dict[str, int]]:
    """The stored document frequencies, and the ones PostgreSQL counts from the rows themselves."""
    kept = {str(t): int(n) for t, n in db.query("SELECT term, df FROM keyword_df")}
    counted = {str(t): int(n) for t, n in db.query("SELECT word, ndoc FROM ts_stat('SELECT terms FROM keyword_terms')")}
    return kept, counted


def _row_versions(db: Database) -> dict[str, str]:
    """chunk id -> the row's xmin: it changes when, and only when, the row is written."""
    return {str(cid): str(x) for cid, x in db.query("SELECT chunk_id, CAST(xmin AS text) FROM keyword_terms")}


def test_rebuild_tokenizes_only_new_or_changed_chunks_and_drops_the_rest(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []
    real = pg_keywords.chunk_tokens

    def counting(c: Chunk) -> list[str]:
        seen.append(index_text(c))
        return real(c)

    monkeypatch.setattr(pg_keywords, "chunk_tokens", counting)
    index = PgKeywordIndex(db).start()
    index.rebuild(DOCS, 1, {c.chunk_id: "kb-a" for c in DOCS})
    assert len(seen) == len(DOCS) and index.count() == len(DOCS) and index.version == 1
    before = _row_versions(db)

    seen.clear()
    renamed = chunk("pump", 0, DOCS[2].text, "pump-guide.txt")  # same id, another file name: other text indexed
    added = chunk("valve", 0, "The relief valve opens at twelve bar.")
    kept = [DOCS[0], DOCS[3], DOCS[4]]  # DOCS[1] is gone; DOCS[4] moves to kb-b
    kb_of = {c.chunk_id: "kb-a" for c in kept} | {DOCS[4].chunk_id: "kb-b"}
    index.rebuild([*kept, renamed, added], 2, kb_of)

    assert len(seen) == 2 and "twelve bar" in seen[1] and "pump guide" in seen[0]
    assert index.version == 2 and index.count() == 5
    after = _row_versions(db)
    assert DOCS[1].chunk_id not in after
    assert after[DOCS[0].chunk_id] == before[DOCS[0].chunk_id]  # untouched rows are not even rewritten
    assert after[DOCS[3].chunk_id] == before[DOCS[3].chunk_id]
    assert ids(index.search("running", 10)) == []
    assert ids(index.search("relief valve", 10)) == ["valve-0000"]
    assert ids(index.search("pump guide", 10)) == ["pump-0000"]
    assert ids(index.search("液压泵", 10, frozenset({"kb-b"}))) == [DOCS[4].chunk_id]
    assert index.search("液压泵", 10, frozenset({"kb-a"})) == []
    stored, counted = _frequencies(db)
    assert stored == counted and "run" not in stored  # the gone chunk's only word left the frequencies with it

    seen.clear()
    index.rebuild([*kept, renamed, added], 3, kb_of)  # nothing changed: nothing tokenized, version moves
    assert seen == [] and index.version == 3 and _row_versions(db) == after

    index.rebuild([], 4)
    assert index.count() == 0 and index.version == 4 and index.search("battery", 10) == []
    assert _frequencies(db) == ({}, {})


def test_frequencies_are_written_in_steps_when_many_change(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_keywords, "BATCH", 3)
    monkeypatch.setattr(pg_keywords, "DF_FLUSH", 5)
    index = PgKeywordIndex(db).start()
    many = [chunk(f"d{i}", j, f"word{i} shared text{j} item{i * 10 + j}") for i in range(6) for j in range(4)]
    index.rebuild(many, 1)
    kept, counted = _frequencies(db)
    assert kept == counted and kept["share"] == len(many)
    index.rebuild(many[::2], 2)
    kept, counted = _frequencies(db)
    assert kept == counted and kept["share"] == len(many) // 2


def test_hostile_tokens_round_trip_exactly_through_tsvector_and_tsquery_input(db: Database) -> None:
    PgKeywordIndex(db).start()
    row = db.one("SELECT tsvector_to_array(CAST(? AS tsvector))", (tsvector_literal(HOSTILE),))
    assert row is not None and sorted(row[0]) == sorted(set(HOSTILE))
    for token in HOSTILE:
        row = db.one(
            "SELECT CAST(? AS tsvector) @@ CAST(? AS tsquery), CAST(? AS tsvector) @@ CAST(? AS tsquery)",
            (
                tsvector_literal(HOSTILE),
                tsquery_literal([token]),
                tsvector_literal(["other"]),
                tsquery_literal([token]),
            ),
        )
        assert row == (True, False), token
    assert tsquery_literal([]) == "" and tsvector_literal([]) == ""
    assert tsvector_literal(["x" * 3000, "ok"]) == "'ok':2"  # a lexeme PostgreSQL would refuse is left out


@pytest.mark.parametrize(
    "query",
    ["", "   ", "'", "''", "\\", "\\'", "a'b", "&|!:*()", "battery:* & !pump", "' | '", "<-> <2>", "!(", "\x00",
     "battery\x00pump", "电池'\"", "x" * 5000, "battery " * 2000, ":*", "()"],
)  # fmt: skip
def test_hostile_queries_never_break_the_query(index: PgKeywordIndex, query: str) -> None:
    hits = index.search(query, 10)
    assert all(score > 0 for _, score in hits)
    if "battery" in query:
        assert "battery-0000" in ids(hits)


def test_hostile_chunk_texts_are_indexed_and_found(db: Database) -> None:
    index = PgKeywordIndex(db).start()
    chunks = [
        chunk("h", 0, "O'Brien's \\path\\to & | ! : * ( ) <-> 'quoted' \"double\" pump"),
        chunk("h", 1, "y" * 5000 + " valve"),  # one word longer than PostgreSQL takes
        chunk("h", 2, "the and of"),  # stopwords only: no tokens but the file name's
        chunk("h", 3, ""),
        chunk("h", 4, "gear " * 20_000),  # more positions than PostgreSQL keeps
    ]
    index.rebuild(chunks, 1)
    assert index.count() == 5
    assert ids(index.search("O'Brien path", 10)) == ["h-0000"]
    assert ids(index.search("valve", 10)) == ["h-0001"]
    assert ids(index.search("gear", 10)) == ["h-0004"]


def test_two_indexes_on_one_database_share_rows_and_version(postgres_url: str) -> None:
    dbs = [open_database(postgres_url, pool_size=2) for _ in range(2)]
    try:
        one, two = PgKeywordIndex(dbs[0]).start(), PgKeywordIndex(dbs[1]).start()
        assert one.version == two.version == -1
        one.rebuild(DOCS, 7)
        assert two.version == 7 and ids(two.search("hydraulic pump", 10)) == ["pump-0000"]
        two.rebuild(DOCS[:2], 8)
        assert one.version == 8 and one.search("hydraulic pump", 10) == []
        assert ids(one.search("battery warranty", 10))[0] == "battery-0000"
    finally:
        for db in dbs:
            db.close()


def test_rebuilds_of_two_replicas_at_once_leave_one_consistent_index(postgres_url: str) -> None:
    dbs = [open_database(postgres_url, pool_size=2) for _ in range(2)]
    try:
        indexes = [PgKeywordIndex(db).start() for db in dbs]
        many = [chunk(f"d{i}", j, f"word{i} shared text {j}") for i in range(40) for j in range(10)]
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def rebuild(i: int) -> Callable[[], None]:
            def run() -> None:
                start.wait()
                try:
                    indexes[i].rebuild(many, 5)
                except BaseException as exc:  # the outcome under test
                    errors.append(exc)

            return run

        threads = [threading.Thread(target=rebuild(i)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        assert indexes[0].count() == len(many) and indexes[1].version == 5
        assert len(indexes[1].search("word3", 100)) == 10
    finally:
        for db in dbs:
            db.close()


def test_another_tokenizer_s_index_reads_as_stale_and_is_rebuilt_whole(index: PgKeywordIndex, db: Database) -> None:
    db.execute("UPDATE keyword_meta SET value = '0' WHERE key = 'tokenizer'")
    assert index.version == -1
    before = _row_versions(db)
    index.rebuild(DOCS, 1)
    assert index.version == 1
    after = _row_versions(db)
    assert set(after) == set(before) and all(after[cid] != before[cid] for cid in after)


def test_a_sqlite_database_is_refused(tmp_path: Path) -> None:
    db = open_database(tmp_path / "k.sqlite3")
    try:
        with pytest.raises(ConfigError, match="PostgreSQL"):
            PgKeywordIndex(db).start()
    finally:
        db.close()


def test_an_unknown_ranking_is_refused(db: Database) -> None:
    with pytest.raises(ConfigError, match="ranking"):
        PgKeywordIndex(db, ranking="bm25; DROP TABLE keyword_terms").start()
