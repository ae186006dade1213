"""``DocumentFilter`` and the tag rules: what is accepted, what is refused with a message that says why."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from ragapp.core.filters import MAX_TAGS, DocumentFilter, TagError, clean_tag, clean_tags, stamp


def test_tags_are_trimmed_lowered_and_kept_once() -> None:
    assert clean_tags(["  HR  Policy ", "hr policy", "财务", "v2.1"]) == ("hr policy", "财务", "v2.1")


@pytest.mark.parametrize(
    ("tag", "says"),
    [("", "empty"), ("x" * 41, "over 40"), ("a,b", "character"), ("'quoted'", "character"), ("-x", "character")],
)
def test_a_bad_tag_is_refused_with_the_reason(tag: str, says: str) -> None:
    with pytest.raises(TagError, match=says) as refused:
        clean_tag(tag)
    said = refused.value.said  # a record, worded by the page in its language
    assert said is not None and said.english == str(refused.value) and said.worded(True)


def test_too_many_tags_are_refused() -> None:
    with pytest.raises(TagError, match=f"at most {MAX_TAGS}"):
        clean_tags([f"t{i}" for i in range(MAX_TAGS + 1)])


def test_a_filter_cleans_its_tags_and_file_types() -> None:
    where = DocumentFilter(tags=("HR",), file_types=(".PDF", "docx"))
    assert where.tags == ("hr",)
    assert where.file_types == ("pdf", "docx")
    assert not where.is_empty()
    assert DocumentFilter().is_empty()


def test_a_filter_refuses_unknown_fields_and_bad_values() -> None:
    with pytest.raises(ValidationError, match="extra"):
        DocumentFilter.model_validate({"tag": ["hr"]})
    with pytest.raises(ValidationError, match="file type"):
        DocumentFilter(file_types=("p d f",))
    with pytest.raises(ValidationError, match="character"):
        DocumentFilter(tags=("a,b",))
    with pytest.raises(ValidationError):
        DocumentFilter.model_validate({"modified_after": "last week"})


def test_dates_compare_as_the_catalog_writes_them() -> None:
    where = DocumentFilter.model_validate({"added_after": "2024-03-01", "modified_before": "2024-03-01T10:00:00+02:00"})
    assert where.added_after is not None and where.modified_before is not None
    assert stamp(where.added_after) == "2024-03-01 00:00:00"
    assert stamp(where.modified_before) == "2024-03-01 08:00:00"  # UTC
    assert stamp(datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2024-01-02 03:04:05"
    assert "added_after=2024-03-01" in where.describe()
