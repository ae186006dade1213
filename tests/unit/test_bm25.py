"""The keyword index on real bm25s: empty index, zero scores, persistence, Chinese, knowledge-base scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragapp.core.types import Chunk
from ragapp.store.bm25 import Bm25Index
from ragapp.store.tokenize import TOKENIZER_VERSION


def chunk(cid: str, text: str, source: str = "notes.txt") -> Chunk:
    return Chunk(cid, cid.split("-")[0], int(cid.split("-")[1]), text, source)


CHUNKS = [
    chunk("a-0000", "The dock empties the dust bin automatically."),
    chunk("a-0001", "Clean the side brush every month."),
    chunk("b-0000", "流明机器人的总部位于杭州，主要产品是扫地机器人。", "about.txt"),
    chunk("b-0001", "保修期为十二个月，电池保修六个月。", "about.txt"),
]


def test_index_that_was_never_built_returns_nothing(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    assert index.version == -1
    assert index.search("dock", 5) == []


def test_index_built_from_no_chunks_returns_nothing(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild([], version=0)
    assert index.version == 0
    assert index.search("dock", 5) == []
    assert Bm25Index(tmp_path / "bm25").start().search("dock", 5) == []


def test_only_matching_chunks_come_back(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(CHUNKS, version=1)
    # k is larger than the number of matches: bm25s pads with zero-score rows, which must be dropped.
    hits = index.search("dust bin", top_k=4)
    assert [cid for cid, _ in hits] == ["a-0000"]
    assert hits[0][1] > 0


def test_scores_are_positive_and_best_first(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(CHUNKS, version=1)
    hits = index.search("brush dock brush", top_k=10)
    assert {cid for cid, _ in hits} == {"a-0000", "a-0001"}
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)


def test_unknown_words_and_stopwords_give_nothing(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(CHUNKS, version=1)
    assert index.search("volcano", 5) == []
    assert index.search("what is the", 5) == []


def test_chinese_query_finds_the_chinese_chunk(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(CHUNKS, version=1)
    hits = index.search("电池的保修期是多久？", top_k=4)
    assert hits[0][0] == "b-0001"
    assert "b-0000" not in {cid for cid, _ in hits}
    assert index.search("总部在哪里", top_k=4)[0][0] == "b-0000"


def test_file_name_is_searchable_through_the_index_text(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild([chunk("c-0000", "Nothing special here.", "glide_w3_guide.html"), *CHUNKS], version=1)
    assert [cid for cid, _ in index.search("glide", 5)] == ["c-0000"]


def test_persistence_round_trip_keeps_version_and_results(tmp_path: Path) -> None:
    first = Bm25Index(tmp_path / "bm25").start()
    first.rebuild(CHUNKS, version=7)
    before = first.search("side brush", 4)

    reopened = Bm25Index(tmp_path / "bm25").start()
    assert reopened.version == 7
    assert reopened.search("side brush", 4) == before
    assert before[0][0] == "a-0001"
    meta = json.loads((tmp_path / "bm25" / "meta.json").read_text("utf-8"))
    assert meta == {
        "version": 7,
        "tokenizer": TOKENIZER_VERSION,
        "chunk_ids": [c.chunk_id for c in CHUNKS],
        "kbs": ["default"] * len(CHUNKS),  # rebuilt without a knowledge-base map: all in the default one
        "docs": [c.doc_id for c in CHUNKS],  # what a document filter masks by
    }


def test_rebuild_replaces_the_old_index(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(CHUNKS, version=1)
    index.rebuild(CHUNKS[2:], version=2)
    assert index.search("dock", 4) == []
    assert Bm25Index(tmp_path / "bm25").start().version == 2
    assert not (tmp_path / "bm25.tmp").exists()


def test_damaged_index_is_treated_as_missing(tmp_path: Path) -> None:
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(CHUNKS, version=3)
    (tmp_path / "bm25" / "meta.json").write_text("{not json", "utf-8")
    reopened = Bm25Index(tmp_path / "bm25").start()
    assert reopened.version == -1  # so the store rebuilds it from the catalog
    assert reopened.search("dock", 4) == []


# -- knowledge-base scope -------------------------------------------------------------------------

KB_OF = {"a-0000": "robots", "a-0001": "robots", "b-0000": "公司", "b-0001": "公司"}


@pytest.fixture
def scoped(tmp_path: Path) -> Bm25Index:
    index = Bm25Index(tmp_path / "bm25").start()
    # One English chunk in a third base, sharing words with the "robots" base.
    extra = chunk("c-0000", "The dock and the side brush of the office robot.", "office.txt")
    index.rebuild([*CHUNKS, extra], version=1, kb_of=KB_OF | {"c-0000": "office"})
    return index


def ids_of(hits: list[tuple[str, float]]) -> set[str]:
    return {cid for cid, _ in hits}


def test_scoped_search_returns_only_chunks_of_those_knowledge_bases(scoped: Bm25Index) -> None:
    assert ids_of(scoped.search("dock brush", 10)) == {"a-0000", "a-0001", "c-0000"}
    assert ids_of(scoped.search("dock brush", 10, kbs=frozenset({"robots"}))) == {"a-0000", "a-0001"}
    assert ids_of(scoped.search("dock brush", 10, kbs=frozenset({"office"}))) == {"c-0000"}
    assert ids_of(scoped.search("dock brush", 10, kbs=frozenset({"robots", "office"}))) == {
        "a-0000",
        "a-0001",
        "c-0000",
    }
    assert scoped.search("dock brush", 10, kbs=frozenset({"公司"})) == []  # no match in that base
    assert scoped.search("保修期", 10, kbs=frozenset({"公司"}))[0][0] == "b-0001"


def test_scores_do_not_change_with_the_scope(scoped: Bm25Index) -> None:
    everywhere = dict(scoped.search("dock brush", 10))
    for cid, score in scoped.search("dock brush", 10, kbs=frozenset({"robots"})):
        assert score == pytest.approx(everywhere[cid])


def test_unknown_or_empty_scope_finds_nothing(scoped: Bm25Index) -> None:
    assert scoped.search("dock", 10, kbs=frozenset({"nope"})) == []
    assert scoped.search("dock", 10, kbs=frozenset()) == []


def test_a_small_scope_still_gets_top_k_hits(tmp_path: Path) -> None:
    # 300 strong matches in a big base and 4 weak ones in a small base: filtering the global top k
    # afterwards would leave the small base with nothing.
    big = [chunk(f"big-{i:04d}", "dock dock dock dust bin dock") for i in range(300)]
    small = [
        chunk(f"small-{i:04d}", f"A long note {i} that mentions the dock once among many other words.")
        for i in range(4)
    ]
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(big + small, version=1, kb_of={c.chunk_id: "small" for c in small})
    hits = index.search("dock", top_k=3, kbs=frozenset({"small"}))
    assert len(hits) == 3 and ids_of(hits) <= {c.chunk_id for c in small}
    assert len(index.search("dock", top_k=10, kbs=frozenset({"small"}))) == 4
    assert ids_of(index.search("dock", top_k=3, kbs=frozenset({"default"}))) <= {c.chunk_id for c in big}


def test_scope_survives_reopening(scoped: Bm25Index, tmp_path: Path) -> None:
    reopened = Bm25Index(tmp_path / "bm25").start()
    assert reopened.version == 1
    assert ids_of(reopened.search("dock brush", 10, kbs=frozenset({"office"}))) == {"c-0000"}


# -- tokenizer version ----------------------------------------------------------------------------


def test_index_built_with_another_tokenizer_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Bm25Index(tmp_path / "bm25").start().rebuild(CHUNKS, version=5)
    assert Bm25Index(tmp_path / "bm25").start().version == 5
    monkeypatch.setattr("ragapp.store.bm25.TOKENIZER_VERSION", TOKENIZER_VERSION + 1)
    stale = Bm25Index(tmp_path / "bm25").start()
    assert stale.version == -1  # so the store rebuilds it from the catalog
    assert stale.search("dock", 4) == []
    stale.rebuild(CHUNKS, version=5)
    assert Bm25Index(tmp_path / "bm25").start().version == 5
    meta = json.loads((tmp_path / "bm25" / "meta.json").read_text("utf-8"))
    assert meta["tokenizer"] == TOKENIZER_VERSION + 1


def test_index_from_before_tokenizer_versions_is_stale(tmp_path: Path) -> None:
    Bm25Index(tmp_path / "bm25").start().rebuild(CHUNKS, version=5)
    meta_path = tmp_path / "bm25" / "meta.json"
    meta = json.loads(meta_path.read_text("utf-8"))
    meta_path.write_text(json.dumps({"version": 5, "chunk_ids": meta["chunk_ids"]}), "utf-8")  # the old layout
    assert Bm25Index(tmp_path / "bm25").start().version == -1


def test_a_scanned_chunk_is_found_through_ocr_s_confusions_and_counts_once(tmp_path: Path) -> None:
    scanned = Chunk("s-0000", "s", 0, "Call asnl_delete_structure on the asnl node.", "scan.pdf", ocr_confidence=0.9)
    typed = Chunk("t-0000", "t", 0, "Call asnl_delete_structure on the asnl node.", "typed.txt")
    right = Chunk("r-0000", "r", 0, "Call asn1_delete_structure on the asn1 node.", "manual.txt")
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild([scanned, typed, right], version=1)
    found = dict(index.search("asn1", 5))
    # the scan's "asnl" is the "asn1" asked for; typed text that says "asnl" is not
    assert set(found) == {"s-0000", "r-0000"}
    assert found["s-0000"] == pytest.approx(found["r-0000"], rel=0.35)  # each counted once, not twice
