"""The page's event handlers keep their annotations as objects, not strings: Gradio reads a handler's type hints
(to find the ``gr.Request`` and event-data parameters it fills in) several times for each of the page's events, at
every start of the app, and a string annotation (``from __future__ import annotations``) is compiled again at each
read: about a tenth of building the page."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from ragapp.ui.mount import build_page

pytestmark = pytest.mark.integration


def _where(fn: Any) -> str:
    inner = inspect.unwrap(getattr(fn, "__func__", fn))
    return f"{getattr(inner, '__module__', '?')}.{getattr(inner, '__qualname__', repr(inner))}"


def test_no_handler_of_the_page_has_an_annotation_kept_as_a_string(make_engine: Callable[..., Any]) -> None:
    page = build_page(make_engine().engine)
    handlers = [f.fn for f in page.fns.values() if f.fn is not None]
    assert len(handlers) > 100  # every event of the page, not a few
    stringly = sorted(
        {_where(fn) for fn in handlers if any(isinstance(a, str) for a in getattr(fn, "__annotations__", {}).values())}
    )
    assert stringly == [], f"drop `from __future__ import annotations` from their modules: {stringly}"
