"""Document metadata and tags in the catalog, and filters resolved into documents, on SQLite and PostgreSQL
(``store_target``): each filter field, knowledge-base scope, cascade on delete, and carrying over to a new version."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ragapp.core.filters import DocumentFilter
from ragapp.core.types import Chunk, DocumentRecord
from ragapp.store.catalog import Catalog


@pytest.fixture
def catalog(store_target: Callable[[str], Any]) -> Iterator[Catalog]:
    cat = Catalog(store_target("catalog")).start()
    yield cat
    cat.close()


def add(
    catalog: Catalog, doc_id: str, name: str, meta: dict[str, str], kb: str = "default", file_type: str = "pdf",
    added_at: str = "2024-01-01 00:00:00", again: bool = False,
) -> None:  # fmt: skip
    record = DocumentRecord(doc_id, name, file_type, f"hash-{doc_id}-{again}", 10, None, 1, added_at, kb)
    with catalog.transaction() as tx:
        catalog.store_document(tx, record, [Chunk(f"{doc_id}-0000", doc_id, 0, "text", name)], again=again, meta=meta)


@pytest.fixture
def library(catalog: Catalog) -> Catalog:
    add(
        catalog,
        "leave",
        "leave.pdf",
        {
            "title": "Leave Policy",
            "author": "Ana Ruiz",
            "source": "hr-share",
            "path": "policies/2024/leave.pdf",
            "folder": "policies/2024",
            "modified": "2024-03-01 08:00:00",
        },
    )
    add(
        catalog,
        "travel",
        "travel.docx",
        {
            "title": "Travel_Rules 100%",
            "source": "hr-share",
            "path": "policies/2023/travel.docx",
            "modified": "2023-05-01 00:00:00",  # what the file says; it changed at its source since:
            "changed": "2024-02-01 00:00:00",
        },
        file_type="docx",
    )
    add(
        catalog,
        "notes",
        "notes.txt",
        {"source": "upload", "path": "notes.txt"},
        kb="eng",
        file_type="txt",
        added_at="2024-06-01 00:00:00",
    )
    add(catalog, "old", "old.md", {}, kb="eng", file_type="md")  # from before metadata: an upload by its name
    catalog.set_tags("leave", ["hr", "policy"])
    catalog.set_tags("notes", ["hr"])
    return catalog  # fmt: skip


def ids(catalog: Catalog, kbs: frozenset[str] | None = None, **fields: Any) -> set[str]:
    return set(catalog.matching(DocumentFilter(**fields), kbs))


def test_metadata_and_tags_are_read_back(library: Catalog) -> None:
    assert library.document_meta("leave")["author"] == "Ana Ruiz"
    assert library.document_meta("old") == {}
    assert library.tags("leave") == ["hr", "policy"]
    assert library.all_tags() == [("hr", 2), ("policy", 1)]


def test_each_field_of_a_filter(library: Catalog) -> None:
    assert ids(library) == {"leave", "travel", "notes", "old"}
    assert ids(library, tags=("hr",)) == {"leave", "notes"}
    assert ids(library, tags=("policy", "nothing")) == {"leave"}
    assert ids(library, source="hr-share") == {"leave", "travel"}
    assert ids(library, source="upload") == {"notes", "old"}  # no source kept: an upload
    assert ids(library, path_prefix="policies/2024/") == {"leave"}
    assert ids(library, path_prefix="old") == {"old"}  # no path kept: its name
    assert ids(library, path_glob="policies/*.docx") == {"travel"}
    assert ids(library, file_types=("pdf", "md")) == {"leave", "old"}
    assert ids(library, author="ruiz") == {"leave"}
    assert ids(library, title="rules 100%") == {"travel"}
    assert ids(library, title="_rules 100") == {"travel"}
    assert ids(library, title="%") == {"travel"}  # a literal percent sign, not a wildcard
    assert ids(library, modified_after="2024-01-02") == {"leave", "notes", "travel"}  # no date: when it was added
    assert ids(library, modified_before="2024-01-02") == {"old"}
    assert ids(library, added_after="2024-02-01") == {"notes"}
    assert ids(library, tags=("hr",), file_types=("txt",)) == {"notes"}  # every field must hold


def test_a_filter_stays_within_the_knowledge_bases(library: Catalog) -> None:
    assert ids(library, frozenset({"eng"}), tags=("hr",)) == {"notes"}
    assert ids(library, frozenset({"eng"}), source="hr-share") == set()
    assert ids(library, frozenset(), tags=("hr",)) == set()


def test_tags_and_metadata_go_with_their_document(library: Catalog) -> None:
    with library.transaction() as tx:
        library.delete_document(tx, "leave")
    assert library.document_meta("leave") == {}
    assert library.tags("leave") == []
    assert library.all_tags() == [("hr", 1)]
    assert not library.set_tags("leave", ["x"])  # gone


def test_tagging_bumps_the_version(library: Catalog) -> None:
    before = library.version
    library.set_tags("travel", ["travel"])
    assert library.version > before
    library.set_tags("travel", [])
    assert library.tags("travel") == []


def test_a_new_version_keeps_the_tags_and_indexed_again_keeps_its_origin(library: Catalog) -> None:
    add(library, "leave2", "leave.pdf", {"title": "Leave Policy v2", "source": "upload", "path": "leave.pdf"})
    assert library.document("leave") is None
    assert library.tags("leave2") == ["hr", "policy"]
    assert library.document_meta("leave2")["path"] == "leave.pdf"  # a new upload says where it came from anew
    add(library, "travel", "travel.docx", {"title": "Travel Rules"}, file_type="docx", again=True)
    meta = library.document_meta("travel")
    assert meta["title"] == "Travel Rules"  # read from the file again
    assert meta["path"] == "policies/2023/travel.docx"  # not in the file: kept
    assert (meta["modified"], meta["changed"]) == ("2023-05-01 00:00:00", "2024-02-01 00:00:00")
