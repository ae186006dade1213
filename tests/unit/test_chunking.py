"""Structure-aware chunking: stable ids, one section per chunk, overlap, sentence ends, size bound."""

from __future__ import annotations

import itertools
import re

from ragapp.core.chunks import index_text
from ragapp.core.types import Chunk, ParsedDocument, Section
from ragapp.ingest.chunking import chunk_document

ZH_SENTENCES = [f"第{i}条说明介绍扫地机器人的第{i}项功能，用起来非常方便。" for i in range(1, 25)]
EN_SENTENCES = [f"Step {i} is short." for i in range(1, 30)]


def doc(*sections: Section, name: str = "manual.md") -> ParsedDocument:
    return ParsedDocument(name=name, file_type="md", sections=tuple(sections))


def test_ids_are_doc_id_and_four_digit_ordinal() -> None:
    chunks = chunk_document(doc(Section(" ".join(EN_SENTENCES))), "d0c1d", chunk_size=100, chunk_overlap=20)
    assert len(chunks) > 3
    assert [c.chunk_id for c in chunks] == [f"d0c1d-{i:04d}" for i in range(len(chunks))]
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert {c.doc_id for c in chunks} == {"d0c1d"}
    assert {c.source for c in chunks} == {"manual.md"}


def test_same_document_gives_the_same_chunks() -> None:
    parsed = doc(Section("".join(ZH_SENTENCES), page=1), Section(" ".join(EN_SENTENCES), page=2))
    first = chunk_document(parsed, "abc", chunk_size=120, chunk_overlap=30)
    second = chunk_document(parsed, "abc", chunk_size=120, chunk_overlap=30)
    assert first == second


def test_ordinals_run_across_sections() -> None:
    chunks = chunk_document(doc(Section("One."), Section("Two."), Section("Three.")), "x", 100, 10)
    assert [(c.chunk_id, c.text) for c in chunks] == [("x-0000", "One."), ("x-0001", "Two."), ("x-0002", "Three.")]


def test_sections_never_share_a_chunk_and_keep_page_and_heading() -> None:
    parsed = doc(
        Section("Alpha text about the dock.", page=1, heading="Dock"),
        Section("Beta text about the brush.", page=2, heading="Brush"),
        Section(" ".join(EN_SENTENCES), page=3, heading="Steps"),
    )
    chunks = chunk_document(parsed, "m", chunk_size=400, chunk_overlap=50)
    # Both short sections would fit in one 400-char chunk; they still get one each.
    assert (chunks[0].text, chunks[0].page, chunks[0].heading) == ("Alpha text about the dock.", 1, "Dock")
    assert (chunks[1].text, chunks[1].page, chunks[1].heading) == ("Beta text about the brush.", 2, "Brush")
    assert all((c.page, c.heading) == (3, "Steps") for c in chunks[2:])
    assert not any("Alpha" in c.text or "Beta" in c.text for c in chunks[2:])
    assert chunks[0].location == "p. 1 · Dock"


def test_neighbouring_chunks_overlap() -> None:
    chunks = chunk_document(doc(Section(" ".join(EN_SENTENCES))), "o", chunk_size=100, chunk_overlap=30)
    assert len(chunks) >= 4
    for left, right in itertools.pairwise(chunks):
        first_sentence_of_right = re.match(r"Step \d+ is short\.", right.text)
        assert first_sentence_of_right is not None, right.text
        assert first_sentence_of_right.group(0) in left.text, (left.text, right.text)


def test_no_overlap_when_overlap_is_zero() -> None:
    chunks = chunk_document(doc(Section(" ".join(EN_SENTENCES))), "o", chunk_size=100, chunk_overlap=0)
    steps = [re.findall(r"Step (\d+)", c.text) for c in chunks]
    flat = [n for group in steps for n in group]
    assert flat == [str(i) for i in range(1, 30)]  # every sentence exactly once, in order


def test_chinese_text_is_cut_at_sentence_ends() -> None:
    text = "".join(ZH_SENTENCES)
    chunks = chunk_document(doc(Section(text)), "zh", chunk_size=100, chunk_overlap=20)
    assert len(chunks) >= 5
    for chunk in chunks:
        assert chunk.text.endswith("。"), chunk.text
        assert chunk.text.startswith("第"), chunk.text
    # Nothing lost: every sentence appears in some chunk.
    assert all(any(s in c.text for c in chunks) for s in ZH_SENTENCES)


def test_chunks_respect_the_size_bound() -> None:
    text = "".join(ZH_SENTENCES) + "\n\n" + " ".join(EN_SENTENCES)
    for size in (64, 100, 250):
        chunks = chunk_document(doc(Section(text)), "s", chunk_size=size, chunk_overlap=16)
        assert chunks
        assert max(len(c.text) for c in chunks) <= size


def test_whitespace_only_section_gives_no_chunk() -> None:
    chunks = chunk_document(doc(Section("   \n\n  "), Section("Real text.")), "w", 100, 10)
    assert [(c.chunk_id, c.text) for c in chunks] == [("w-0000", "Real text.")]


def test_index_text_prefixes_title_and_heading() -> None:
    chunk = Chunk("c-0000", "c", 0, "Body.", "lumen_v2-pro_manual.pdf", page=3, heading="Errors")
    assert index_text(chunk) == "lumen v2 pro manual · Errors\nBody."
    no_heading = Chunk("c-0001", "c", 1, "Body.", "faq.txt")
    assert index_text(no_heading) == "faq\nBody."
