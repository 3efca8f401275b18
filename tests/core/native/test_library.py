"""Building, caching and opening compiled kernels (``feedline.core.native``)."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from feedline.core.native import NativeBuildError, NativeLibrary, cache_dir, native_enabled
from feedline.core.native.library import declarations

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None and shutil.which("clang") is None,
    reason="needs a C compiler (cc, gcc or clang)",
)

HEADER = "int add_one(int value);\n"
SOURCE = '#include "probe.h"\nint add_one(int value) { return value + %d; }\n'


def make_library(root: Path, increment: int = 1, source: str = SOURCE) -> NativeLibrary:
    kernels = root / "kernels"
    kernels.mkdir(exist_ok=True)
    (kernels / "probe.h").write_text(HEADER)
    (kernels / "probe.c").write_text(source % increment if "%d" in source else source)
    return NativeLibrary("probe", [kernels / "probe.c"], kernels / "probe.h")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache"
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(folder))
    monkeypatch.delenv("FEEDLINE_NATIVE", raising=False)
    native_enabled.cache_clear()
    yield folder
    native_enabled.cache_clear()


def test_builds_once_and_calls_through_cffi(tmp_path: Path, cache: Path) -> None:
    library = make_library(tmp_path)
    _, lib = library.load()
    assert lib.add_one(41) == 42
    built = list(cache.glob("probe-*.so"))
    assert len(built) == 1 and library.path() == built[0]
    stamp = built[0].stat().st_mtime_ns
    again = make_library(tmp_path)
    assert again.load()[1].add_one(1) == 2
    assert built[0].stat().st_mtime_ns == stamp  # opened from the cache, not rebuilt
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no partial files left


def test_declarations_are_parsed_once_then_imported(tmp_path: Path, cache: Path) -> None:
    library = make_library(tmp_path)
    assert library.load()[1].add_one(1) == 2
    (module,) = cache.glob("_probe_ffi_*.py")
    # A new process opens the library without cffi's C parser (30-50 ms per process).
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from feedline.core.native import NativeLibrary\n"
        f"kernels = Path({str(tmp_path / 'kernels')!r})\n"
        "library = NativeLibrary('probe', [kernels / 'probe.c'], kernels / 'probe.h')\n"
        "assert library.load()[1].add_one(2) == 3\n"
        "print(sorted(m for m in ('cffi', 'pycparser') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=os.environ
    )
    assert done.stdout.strip() == "[]"
    assert list(cache.glob("_probe_ffi_*.py")) == [module]
    # Other declarations get another module.
    (tmp_path / "kernels" / "probe.h").write_text(HEADER + "int unused(void);\n")
    assert declarations("probe", tmp_path / "kernels" / "probe.h").typeof("int(*)(void)")
    assert len(list(cache.glob("_probe_ffi_*.py"))) == 2


def test_declarations_without_a_writable_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(blocker / "cache"))  # under a file: unwritable
    (tmp_path / "probe.h").write_text(HEADER)
    ffi = declarations("probe", tmp_path / "probe.h")
    assert ffi.typeof("int(*)(int)") is not None


def test_a_damaged_declarations_module_is_written_again(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "probe.h").write_text(HEADER)
    declarations("probe", tmp_path / "probe.h")
    (module,) = cache.glob("_probe_ffi_*.py")
    module.write_text("ffi = (")  # e.g. cut short by a full disk
    assert declarations("probe", tmp_path / "probe.h").typeof("int(*)(int)") is not None
    assert "_cffi_backend" in module.read_text()
    assert declarations("probe", tmp_path / "probe.h").typeof("int(*)(int)") is not None


def test_a_header_that_does_not_parse_is_named(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "probe.h").write_text("int add_one(int value) { return 1; }\n")
    with pytest.raises(NativeBuildError, match="opening probe failed"):
        declarations("probe", tmp_path / "probe.h")
    assert not list(cache.glob("_probe_ffi_*"))


def test_changed_source_builds_a_new_library(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = make_library(tmp_path / "a", increment=1)
    assert first.load()[1].add_one(1) == 2
    second = make_library(tmp_path / "b", increment=10)
    assert second.path() != first.path()
    assert second.load()[1].add_one(1) == 11


def test_concurrent_first_use_builds_one_working_library(tmp_path: Path, cache: Path) -> None:
    library = make_library(tmp_path)
    results: list[int] = []
    threads = [
        threading.Thread(target=lambda: results.append(library.load()[1].add_one(2)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [3] * 4 and len(list(cache.glob("probe-*.so"))) == 1


def test_compiler_errors_are_reported_and_remembered(tmp_path: Path, cache: Path) -> None:
    library = make_library(tmp_path, source='#include "probe.h"\nint add_one(int value) { oops }\n')
    with pytest.raises(NativeBuildError, match=r"(?s)building probe failed.*oops"):
        library.load()
    with pytest.raises(NativeBuildError, match="building probe failed"):
        library.load()
    assert not list(cache.glob("probe-*.so")) and not list(cache.glob(".probe*"))


def test_missing_compiler_is_named(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(NativeBuildError, match="no-such-cc"):
        make_library(tmp_path).load()


def test_try_load_warns_once_and_falls_back(
    tmp_path: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    library = make_library(tmp_path)
    builds: list[int] = []
    build = library.build
    monkeypatch.setattr(library, "build", lambda: builds.append(1) or build())
    with caplog.at_level(logging.WARNING, logger="feedline"):
        assert library.try_load() is None
        assert library.try_load() is None
    warnings = [r for r in caplog.records if "probe falls back" in r.getMessage()]
    assert len(warnings) == 1 and "no-such-cc" in warnings[0].getMessage()
    assert builds == [1]  # tried once per process
    with pytest.raises(NativeBuildError, match="no-such-cc") as info:
        library.load()
    # Raised anew each time: a kept exception raised again would grow its traceback for good.
    with pytest.raises(NativeBuildError) as again:
        library.load()
    assert again.value is not info.value


def test_an_unwritable_cache_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("FEEDLINE_CACHE_DIR", str(blocker / "cache"))
    library = make_library(tmp_path)
    with caplog.at_level(logging.WARNING, logger="feedline"):
        assert library.try_load() is None
    assert "not writable" in caplog.text


def test_feedline_native_0_disables_compiled_kernels(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert native_enabled()
    monkeypatch.setenv("FEEDLINE_NATIVE", "0")
    assert native_enabled()  # read once per process...
    native_enabled.cache_clear()
    assert not native_enabled()  # ...until the cache is cleared
    assert make_library(tmp_path).try_load() is None
    assert not cache.exists()
    monkeypatch.setenv("FEEDLINE_NATIVE", "1")
    native_enabled.cache_clear()
    assert native_enabled()


def test_cache_dir_defaults_under_xdg_cache_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FEEDLINE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(os.sep, "somewhere"))
    assert cache_dir() == Path(os.sep, "somewhere", "feedline")


def test_feedline_native_0_wins_over_a_loaded_library(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = make_library(tmp_path)
    assert library.try_load() is not None
    monkeypatch.setenv("FEEDLINE_NATIVE", "0")
    native_enabled.cache_clear()
    assert library.try_load() is None  # as tests that compare the fallback with C expect
