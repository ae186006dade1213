"""Keyword tokenisation: jieba for Chinese runs, stemmed lower-cased words for the rest, stopwords removed."""

from __future__ import annotations

import threading

import pytest

from ragapp.store.tokenize import STOPWORDS, TOKENIZER_VERSION, tokenize


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
    assert tokenize("What is the warranty of the robot?") == ["warranti", "robot"]


def test_stopwords_are_checked_before_stemming() -> None:
    # "doing" is a stopword; "does" would stem to something else first if the order were wrong.
    assert tokenize("doing does having") == []


@pytest.mark.parametrize(
    ("a", "b"),
    [("running", "runs"), ("batteries", "battery"), ("charging", "charged"), ("Cleaning", "cleans")],
)
def test_english_inflections_share_a_token(a: str, b: str) -> None:
    assert tokenize(a) == tokenize(b)
    assert len(tokenize(a)) == 1


def test_query_and_document_meet_on_the_stem() -> None:
    document = set(tokenize("The robot stops charging when the batteries are full."))
    assert set(tokenize("Why did my robot stop? battery charge")) <= document


def test_chinese_is_left_to_jieba() -> None:
    import jieba

    text = "扫地机器人的电池续航"
    assert tokenize(text) == [p for p in jieba.lcut_for_search(text) if p not in STOPWORDS]
    assert tokenize("流明 V2 Pro 的吸力") == ["流明", "v2", "pro", "吸力"]


def test_full_width_letters_and_digits_read_as_ascii() -> None:
    assert tokenize("流明Ｖ２ Ｐｒｏ") == tokenize("流明V2 Pro")


def test_accented_and_greek_letters_stay_in_their_word() -> None:
    assert "café" in tokenize("café")
    assert tokenize("IFN-γ") == ["ifn", "γ"]


def test_model_names_and_codes_are_kept_lower_cased() -> None:
    assert tokenize("Lumen V2 Pro") == ["lumen", "v2", "pro"]
    assert tokenize("error E07") == ["error", "e07"]
    assert tokenize("零件号 LB-5200")[-2:] == ["lb", "5200"]


def test_words_with_digits_are_not_stemmed() -> None:
    assert tokenize("models 5s 3ds") == ["model", "5s", "3ds"]


def test_mixed_chinese_and_model_name() -> None:
    tokens = tokenize("流明 V2 Pro 的吸力")
    assert tokens[:1] == ["流明"]
    assert {"v2", "pro", "吸力"} <= set(tokens)
    assert "的" not in tokens


def test_decimal_numbers_stay_one_token() -> None:
    assert "2.5" in tokenize("firmware 2.5 adds pet mode")
    assert "4.5" in tokenize("安全绳长 4.5 米")
    assert not {"2", "5", "4"} & set(tokenize("firmware 2.5, rope 4.5 m"))


def test_version_strings_are_kept_whole_and_by_prefix() -> None:
    assert tokenize("update to 2.5.0") == ["updat", "2.5.0", "2.5"]
    assert tokenize("v2.5.1") == ["v2.5.1", "v2.5"]
    assert tokenize("1.2.3.4") == ["1.2.3.4", "1.2.3", "1.2"]
    # A question about 2.5 finds a document that says 2.5.0; the trailing full stop is not part of it.
    assert "2.5" in tokenize("Firmware 2.5.0.")
    assert "0" not in tokenize("Firmware 2.5.0.")


def test_tokenizer_version_was_bumped_for_stemming() -> None:
    assert TOKENIZER_VERSION >= 2


def test_tokenize_is_thread_safe() -> None:
    texts = [f"running batteries charging 清洁 {i} cleaning robots version {i}.0.1" for i in range(200)]
    expected = [tokenize(t) for t in texts]
    results: list[list[list[str]]] = []

    def work() -> None:
        results.append([tokenize(t) for t in texts])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_only_stopwords_or_punctuation_gives_nothing() -> None:
    assert tokenize("What is it?") == []
    assert tokenize("！？，。 ... ---") == []
    assert tokenize("") == []
