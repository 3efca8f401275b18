"""The command line: plugins and ops."""

from __future__ import annotations

import pytest

from feedline.cli import main
from feedline.core.plugins import PluginSystem


def test_ops_lists_and_documents(
    plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ops"]) == 0
    listing = capsys.readouterr().out
    assert "external_source" in listing and "arithmetic." not in listing
    assert main(["ops", "cast"]) == 0
    text = capsys.readouterr().out
    assert "fn.cast(input, /, *, dtype" in text and "dtype (feedline.types.DataType" in text
    assert main(["ops", "no_such_op"]) == 2


def test_plugins_command(plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["plugins"])
    out = capsys.readouterr().out
    assert "basic" in out and "external_source" in out
    assert status == (1 if plugin_system.failures else 0)
