"""The entry point registers everything, and feedline's CLI lists it."""

from __future__ import annotations

import json

from feedline.cli import main


def test_the_entry_point_registers_the_operator_reader_and_codec(installed_plugins) -> None:
    installed_plugins.ensure_loaded()
    assert not installed_plugins.failures, installed_plugins.failures
    (info,) = [p for p in installed_plugins.plugins if p.name == "example"]
    assert info.distribution == "feedline-example-plugin"
    assert set(info.operators) == {"example.posterize", "example.readers.csv"}
    assert info.codecs == ["farbfeld"]


def test_feedline_plugins_lists_it(capsys) -> None:
    assert main(["plugins", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    example = next(p for p in report["plugins"] if p["name"] == "example")
    assert example["version"] == "0.1.0" and "example.posterize" in example["operators"]
