"""A Hugging Face Space recognised from its variables, and the defaults it brings: an explicit RAGAPP_ variable
wins over each of them, and /data counts as storage only when it is a folder the app may write."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.config import Settings
from ragapp.config.space import (
    SPACE_FRAME_ANCESTORS,
    Space,
    count_cores,
    detect_space,
    process_env_defaults,
    settings_defaults,
)

SPACE_ENV = {"SPACE_ID": "alice/ragapp", "SPACE_HOST": "alice-ragapp.hf.space", "SYSTEM": "spaces"}


def test_off_a_space_nothing_changes(tmp_path: Path) -> None:
    assert detect_space({}, tmp_path) is None
    assert detect_space({"SYSTEM": "linux", "SPACE_ID": "  "}, tmp_path) is None


def test_a_space_without_storage_listens_everywhere_lets_huggingface_frame_it_and_says_uploads_are_lost(
    tmp_path: Path,
) -> None:
    space = detect_space(SPACE_ENV, tmp_path / "data", cores=2)
    assert space == Space("alice/ragapp", 2, storage=None)
    defaults = settings_defaults(space)
    assert defaults["ui"] == {"host": "0.0.0.0", "port": 7860, "frame_ancestors": SPACE_FRAME_ANCESTORS}
    assert SPACE_FRAME_ANCESTORS.split() == ["'self'", "https://huggingface.co"]
    assert defaults["paths"] == {"ephemeral": True}  # the state dir stays the default one
    assert defaults["llm"] == {"threads": 2}
    assert defaults["embedding"] == {"threads": 2}


def test_writable_storage_at_data_keeps_the_state(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    space = detect_space(SPACE_ENV, data, cores=8)
    assert space is not None and space.storage == data
    assert settings_defaults(space)["paths"] == {"ephemeral": False, "state_dir": data / "ragapp"}


def test_a_file_named_data_is_not_storage(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_text("not a folder")
    space = detect_space(SPACE_ENV, data, cores=2)
    assert space is not None and space.storage is None


def test_a_state_dir_the_owner_chose_is_not_called_ephemeral(tmp_path: Path) -> None:
    space = detect_space(SPACE_ENV | {"ragapp_paths__state_dir": "/mnt/bucket"}, tmp_path / "data", cores=2)
    assert space is not None
    assert settings_defaults(space)["paths"] == {"ephemeral": False}


def test_threads_follow_the_space_s_cores() -> None:
    one = Space("alice/ragapp", 1, None)
    assert settings_defaults(one)["llm"] == {"threads": 1}
    assert settings_defaults(one)["embedding"] == {"threads": 1}
    assert process_env_defaults(Space("alice/ragapp", 8, None)) == {
        "OMP_NUM_THREADS": "8",
        "OMP_WAIT_POLICY": "PASSIVE",
    }


@pytest.mark.parametrize(
    ("affinity", "cpu_max", "cpu_cores", "expected"),
    [
        (16, None, None, 16),  # no quota: the CPUs the process may run on
        (16, "max 100000", None, 16),  # cgroup v2 without a limit
        (16, "200000 100000\n", None, 2),  # two cores' worth of time on a 16-CPU host
        (16, "150000 100000", None, 2),  # a fraction counts as a whole core
        (16, "50000 100000", None, 1),
        (16, None, "4", 4),  # the Space's CPU_CORES
        (16, "800000 100000", "2", 2),  # the smallest of them
        (2, "800000 100000", "8", 2),
        (16, "garbage", "many", 16),  # what cannot be read says nothing
        (0, None, None, 1),  # never below one
    ],
)
def test_count_cores(affinity: int, cpu_max: str | None, cpu_cores: str | None, expected: int) -> None:
    assert count_cores(affinity, cpu_max, cpu_cores) == expected


def test_settings_on_a_space_take_its_defaults_and_explicit_variables_win(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in SPACE_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CPU_CORES", "1")
    defaults = Settings()
    assert (defaults.ui.host, defaults.ui.port) == ("0.0.0.0", 7860)
    assert defaults.ui.frame_ancestors == SPACE_FRAME_ANCESTORS
    assert defaults.llm.threads == 1 and defaults.embedding.threads == 1

    monkeypatch.setenv("RAGAPP_UI__HOST", "127.0.0.1")
    monkeypatch.setenv("RAGAPP_UI__FRAME_ANCESTORS", "'self' https://example.org")
    monkeypatch.setenv("RAGAPP_LLM__THREADS", "3")
    monkeypatch.setenv("RAGAPP_PATHS__STATE_DIR", "/srv/state")
    monkeypatch.setenv("RAGAPP_PATHS__EPHEMERAL", "true")
    chosen = Settings()
    assert chosen.ui.host == "127.0.0.1" and chosen.ui.port == 7860  # the sibling keeps the Space's default
    assert chosen.ui.frame_ancestors == "'self' https://example.org"
    assert chosen.llm.threads == 3 and chosen.embedding.threads == 1
    assert chosen.paths.state_dir == Path("/srv/state") and chosen.paths.ephemeral
    # Arguments win too (tests and tools build their settings so).
    assert Settings(ui={"host": "127.0.0.2"}).ui.host == "127.0.0.2"


def test_settings_off_a_space_keep_the_local_defaults() -> None:
    settings = Settings()
    assert (settings.ui.host, settings.ui.frame_ancestors) == ("127.0.0.1", "'self'")
    assert settings.llm.threads is None and not settings.paths.ephemeral
