"""Plugin discovery through a fake installed distribution, failures, environment variables."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from feedline.core.hookspecs import hookimpl
from feedline.core.plugins import PluginSystem, PluginWarning, use_plugin_system
from feedline.core.schema import OpSchema

FAKE_SITE = Path(__file__).parent / "fake_site"


@pytest.fixture
def fake_site(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(FAKE_SITE))
    monkeypatch.setenv("FEEDLINE_PLUGINS", "fake-good,fake-broken,fake-conflict,python")
    for name in ("fake_good_plugin", "fake_broken_plugin", "fake_conflict_plugin"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return FAKE_SITE


def test_installed_plugin_provides_operator_and_broken_one_is_reported(fake_site: Path) -> None:
    system = PluginSystem()
    with pytest.warns(PluginWarning) as caught:
        registry = system.ensure_loaded()
    messages = [str(w.message) for w in caught]
    broken = [f for f in system.failures if f.name == "fake-broken"]
    assert len(broken) == 1
    assert broken[0].distribution == "feedline-fake-broken"
    assert broken[0].version == "0.1"
    assert broken[0].entry_point == "fake_broken_plugin"
    assert "feedline_dependency_that_does_not_exist" in broken[0].cause
    assert any("fake-broken" in m for m in messages)
    # the conflict: whichever registered second failed, naming both owners
    conflicts = [f for f in system.failures if f.name in ("fake-good", "fake-conflict")]
    assert len(conflicts) == 1
    assert "fake-good" in conflicts[0].cause and "fake-conflict" in conflicts[0].cause
    assert "fake.invert" in registry.operators
    assert "external_source" in registry.operators


def test_operator_from_installed_plugin_runs_in_fn_with_docs(
    fake_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEEDLINE_PLUGINS", "fake-good,python")
    with use_plugin_system(PluginSystem()):
        from feedline import fn, pipeline_def

        assert "fake" in dir(fn)
        assert "invert" in dir(fn.fake)
        doc = fn.fake.invert.__doc__
        assert "Invert uint8 data" in doc and "offset (int or TensorList, default 0)" in doc

        @pipeline_def(batch_size=2, num_threads=1, device_id=None)
        def pipe_fn():
            data = fn.external_source(source=lambda: np.array([[0, 10], [200, 255]], np.uint8))
            return fn.fake.invert(data, offset=1)

        pipe = pipe_fn()
        (out,) = pipe.run()
        assert out.as_array().tolist() == [[0, 246], [56, 1]]  # (255 - x + 1) mod 256
        pipe.close()


def test_missing_operator_error_names_failed_plugins(
    fake_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEEDLINE_PLUGINS", "fake-broken,python")
    with use_plugin_system(PluginSystem()):
        from feedline import fn

        with pytest.warns(PluginWarning), pytest.raises(AttributeError) as info:
            fn.fake.something_else  # noqa: B018
    assert "fake-broken" in str(info.value)
    assert "feedline-fake-broken 0.1" in str(info.value)


def test_disabled_and_autoload_env(fake_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEEDLINE_PLUGINS", "fake-good,fake-broken")
    monkeypatch.setenv("FEEDLINE_DISABLED_PLUGINS", "fake-broken")
    system = PluginSystem()
    registry = system.ensure_loaded()
    assert not system.failures and "fake.invert" in registry.operators
    monkeypatch.delenv("FEEDLINE_PLUGINS")
    monkeypatch.setenv("FEEDLINE_DISABLE_PLUGIN_AUTOLOAD", "1")
    system = PluginSystem()
    assert dict(system.ensure_loaded().operators) == {}


class _CodePlugin:
    @hookimpl
    def feedline_register_operators(self, registry):
        registry.add_operator(OpSchema("code.op", "Registered in code."))


class _FailingHookPlugin:
    @hookimpl
    def feedline_register_operators(self, registry):
        registry.add_operator(OpSchema("half.registered", "Rolled back on failure."))
        raise RuntimeError("boom while registering")


def test_plugins_registered_in_code_and_rollback(empty_plugin_system: PluginSystem) -> None:
    empty_plugin_system.register(_CodePlugin(), "code")
    with pytest.warns(PluginWarning, match="boom while registering"):
        empty_plugin_system.register(_FailingHookPlugin(), "failing")
        registry = empty_plugin_system.ensure_loaded()
    assert "code.op" in registry.operators
    assert "half.registered" not in registry.operators
    assert registry.operators["code.op"].owner == "code"
    with pytest.raises(TypeError):
        registry.operators["x"] = None  # type: ignore[index]


def test_duplicate_needs_override(empty_plugin_system: PluginSystem) -> None:
    registry = empty_plugin_system.ensure_loaded()
    registry.add_operator(OpSchema("dup", "first"), owner="a")
    with pytest.raises(ValueError, match="'a'.*'b'"):
        registry.add_operator(OpSchema("dup", "second"), owner="b")
    registry.add_operator(OpSchema("dup", "second"), owner="b", override=True)
    assert registry.operators["dup"].schema.doc == "second"


def test_import_feedline_is_light() -> None:
    code = (
        "import sys, feedline\n"
        "from feedline import types, Pipeline, pipeline_def\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'cupy', 'pycocotools', 'jax', 'PIL', 'cffi', 'pluggy') or "
        "m.startswith(('feedline.operators', 'feedline.readers', 'feedline.plugins'))]\n"
        "import os\n"
        "maps = open('/proc/self/maps').read()\n"
        "paths = {l.split(maxsplit=5)[-1] for l in maps.splitlines() if '/' in l}\n"
        # feedline's own compiled libraries (and cffi modules), by name: the folders of the
        # clone, the venv or the cache may be called anything, "feedline" included.
        "sos = {p for p in paths if os.path.basename(p).lstrip('_').startswith('feedline')}\n"
        "assert not bad, bad\n"
        "assert not sos, sos\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
