"""Registers the built-in LLM backends. Call ``load_builtin_llms()`` once at start-up."""

from __future__ import annotations

import importlib

_BUILTIN_MODULES = ("ragapp.models.llm_llama_cpp", "ragapp.models.llm_openai")


def load_builtin_llms() -> None:
    """Import the built-in backends so their factories register in ``LLMS``.

    Safe to call repeatedly: Python imports each module once, so nothing registers twice. Neither
    module imports llama_cpp or openai at import time, so this is cheap and never fails on a missing
    optional runtime; that surfaces when the backend is built.
    """
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)
