"""The start-up warm-up searches once in each language, so the first question's search does not pay for the
reranker's loading, Chroma's first query, the keyword index and jieba's dictionary (``Engine._warm_search``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_warm_up_loads_the_reranker_and_runs_a_search_in_each_language(
    make_engine: Callable[..., object], tmp_path: Path
) -> None:
    rig = make_engine(rerank={"backend": "builtin"}, own_models=True)  # the loading is what is tested
    path = tmp_path / "manual.md"
    path.write_text("# Manual\n\nThe battery lasts 90 minutes. 电池可以使用九十分钟。\n", "utf-8")
    rig.engine.library.ingest([(path, path.name)])  # type: ignore[attr-defined]
    retrieval = rig.engine._retrieval  # type: ignore[attr-defined]
    lazy = retrieval.reranker._model  # the shipped reranker loads its weights on first use

    assert lazy._value is None
    rig.engine.warm_up()  # type: ignore[attr-defined]

    assert lazy._value is not None
    for question in ("How do I get started?", "怎么开始使用？"):  # the warm-up's own searches, now cached
        assert retrieval.retrieve(question).cached
    assert not rig.engine.warming  # type: ignore[attr-defined]


def test_a_failing_search_does_not_stop_the_warm_up(make_engine: Callable[..., object]) -> None:
    rig = make_engine()
    retrieval = rig.engine._retrieval  # type: ignore[attr-defined]

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the index is gone")

    retrieval.retrieve = broken
    rig.engine.warm_up()  # type: ignore[attr-defined]  (logs a warning, never raises)
    assert not rig.engine.warming  # type: ignore[attr-defined]
