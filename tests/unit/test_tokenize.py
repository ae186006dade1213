"""Keyword tokenisation: jieba for Chinese runs, lower-cased words for the rest, stopwords removed."""

from __future__ import annotations

import pytest

from ragapp.store.tokenize import STOPWORDS, tokenize


def test_chinese_is_segmented_into_words() -> None:
    tokens = tokenize("扫地机器人的电池续航")
    assert {"扫地", "机器人", "电池", "续航"} <= set(tokens)
    assert "扫地机器人的电池续航" not in tokens  # not one clause-long token


def test_search_mode_also_emits_sub_words_of_compounds() -> None:
    tokens = tokenize("保修期")
    assert "保修期" in tokens
    assert "保修" in tokens


@pytest.mark.parametrize(
    ("text", "dropped"),
    [
        ("What is the warranty of the robot?", {"what", "is", "the", "of"}),
        ("请问流明的保修期是多久？", {"请问", "的", "是"}),
        ("Please tell me how to reset it", {"please", "tell", "me", "how", "to", "it"}),
    ],
)
def test_stopwords_are_removed(text: str, dropped: set[str]) -> None:
    tokens = tokenize(text)
    assert not dropped & set(tokens), tokens
    assert dropped <= STOPWORDS


def test_content_words_survive() -> None:
    assert tokenize("What is the warranty of the robot?") == ["warranty", "robot"]


def test_model_names_and_codes_are_kept_lower_cased() -> None:
    assert tokenize("Lumen V2 Pro") == ["lumen", "v2", "pro"]
    assert tokenize("error E07") == ["error", "e07"]
    assert tokenize("零件号 LB-5200")[-2:] == ["lb", "5200"]


def test_mixed_chinese_and_model_name() -> None:
    tokens = tokenize("流明 V2 Pro 的吸力")
    assert tokens[:1] == ["流明"]
    assert {"v2", "pro", "吸力"} <= set(tokens)
    assert "的" not in tokens


def test_decimal_numbers_stay_one_token() -> None:
    assert "2.5" in tokenize("firmware 2.5 adds pet mode")
    assert "4.5" in tokenize("安全绳长 4.5 米")


def test_only_stopwords_or_punctuation_gives_nothing() -> None:
    assert tokenize("What is it?") == []
    assert tokenize("！？，。 ... ---") == []
    assert tokenize("") == []
