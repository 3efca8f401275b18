"""``feedline plugins`` and ``feedline ops``: listings, counts, --json, --all, kernel owners."""

from __future__ import annotations

import json

import pytest

from feedline.cli import main
from feedline.core.hookspecs import hookimpl
from feedline.core.plugins import PluginSystem
from feedline.core.schema import OpSchema


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


def test_counts_agree_between_plugins_and_ops(
    plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["ops"])
    listed = capsys.readouterr().out.splitlines()
    main(["plugins", "--json"])
    report = json.loads(capsys.readouterr().out)
    provided = [op for plugin in report["plugins"] for op in plugin["operators"]]
    assert report["operators"] == len(listed) == len(provided)
    assert "decoders._image_resize" not in provided and "arithmetic.add" not in provided
    main(["plugins"])
    assert f"{len(listed)} public operators" in capsys.readouterr().out
    main(["ops", "--all"])
    everything = capsys.readouterr().out.splitlines()
    assert len(everything) == report["all_operators"] > len(listed)
    assert any(line.startswith("decoders._image_resize") for line in everything)
    main(["plugins", "--json", "--all"])
    provided = [op for p in json.loads(capsys.readouterr().out)["plugins"] for op in p["operators"]]
    assert "decoders._image_resize" in provided and len(provided) == len(everything)


def test_plugins_json_names_distribution_and_version(
    plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["plugins", "--json"])
    report = json.loads(capsys.readouterr().out)
    basic = next(p for p in report["plugins"] if p["name"] == "basic")
    assert basic["distribution"] == "feedline" and basic["version"]
    assert basic["entry_point"] == "feedline.operators.cpu.basic"


class _Broken:
    @hookimpl
    def feedline_register_operators(self, registry) -> None:
        raise RuntimeError("the schema file is missing")


SPLIT = OpSchema("split.op", "Owned by one plugin, GPU kernel from another.")


class _Owner:
    @hookimpl
    def feedline_register_operators(self, registry) -> None:
        registry.add_operator(SPLIT, {"cpu": "tests.core.ops_for_tests:NoiseKernel"})


class _GpuAddOn:
    @hookimpl
    def feedline_register_kernels(self, registry) -> None:
        registry.add_kernel("split.op", "gpu", "tests.core.ops_for_tests:NoiseKernel")


def test_failures_are_listed_with_their_cause(
    empty_plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    empty_plugin_system.register(_Broken(), "broken")
    with pytest.warns(UserWarning, match="the schema file is missing"):
        status = main(["plugins"])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAILED broken" in out and "RuntimeError: the schema file is missing" in out
    main(["plugins", "--json"])
    (failure,) = json.loads(capsys.readouterr().out)["failures"]
    assert failure["name"] == "broken" and "schema file is missing" in failure["cause"]


def test_ops_shows_each_kernel_and_the_plugin_providing_it(
    empty_plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    empty_plugin_system.register(_Owner(), "owner")
    empty_plugin_system.register(_GpuAddOn(), "gpu-addon")
    assert main(["ops", "split.op"]) == 0
    out = capsys.readouterr().out
    assert "registered by plugin owner" in out
    assert "cpu    plugin owner" in out and "gpu    plugin gpu-addon" in out


def test_unknown_operator_suggests_close_names(
    plugin_system: PluginSystem, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ops", "resise"]) == 2
    assert "did you mean resize" in capsys.readouterr().err


def test_ops_docs_are_plain_text(plugin_system: PluginSystem, capsys) -> None:
    main(["ops", "readers.file"])
    assert "``" not in capsys.readouterr().out
