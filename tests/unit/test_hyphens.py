"""Words broken over a line end are made whole at ingest: "man-\\nagement" is searched and quoted as "management",
while a word the document writes hyphenated keeps its hyphen, and other scripts are left alone."""

from __future__ import annotations

from pathlib import Path

from ragapp.ingest.hyphens import hyphenated_words, join_broken_words
from ragapp.ingest.parsing import parse_file


def test_a_broken_word_is_joined_and_a_hyphenated_one_keeps_its_hyphen() -> None:
    text = (
        "Key man-\nagement is well-\nknown.\nA well-known rule: re-\n  use the e-\nmail. "
        "Cafe\u00ad\nteria, soft\u00adhyphen."
    )
    joined = join_broken_words(text, hyphenated_words([text]))
    assert joined == "Key management is well-known.\nA well-known rule: reuse the email. Cafeteria, softhyphen."


def test_what_is_not_a_broken_latin_word_is_left_as_it_is() -> None:
    kept = "Pages 12-\n14 are blank.\nThe -\nflag.\nA list:\n- item\nUpper-\nCase stays.\n网络-\n管理"
    assert join_broken_words(kept, set()) == kept


def test_parsing_joins_broken_words(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nThe man-\nagement of keys.\n", "utf-8")
    doc = parse_file(path)
    text = "\n".join(s.text for s in doc.sections)
    assert "The management of keys." in text
