"""Every ``python -m ragbench.<command>`` starts and explains itself (``--help``) under its module path. The
commands that can run on tiny data have their own end-to-end tests beside this one."""

from __future__ import annotations

import runpy
import sys

import pytest

COMMANDS = [
    "ragbench.eval",
    "ragbench.bench",
    "ragbench.routing",
    "ragbench.rerank.train",
    "ragbench.rerank.measure",
    "ragbench.rerank.blend",
    "ragbench.answers",
    "ragbench.answers.truth",
    "ragbench.api",
    "ragbench.scale",
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # runpy: the module was imported already (other tests)
@pytest.mark.parametrize("module", COMMANDS)
def test_the_command_prints_its_usage(
    module: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", [module, "--help"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("usage:")
