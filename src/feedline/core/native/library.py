"""Compiled libraries opened with cffi: built on first use, opened once, with a fallback.

A :class:`NativeLibrary` names its sources and a header of plain declarations. On first use it
builds them with :func:`~feedline.core.native.build.build_library` (or finds them cached)
and opens the result with cffi in ABI mode (:func:`open_library`, which any other build, e.g.
the GPU plugin's, may use on its own). The header's declarations are compiled once into an
out-of-line cffi module in the cache (:func:`declarations`): importing it takes about 2 ms,
where parsing the header with cffi's C parser takes 30-50 ms in every process. Callers with a
pure-Python path (the CPU kernels, the COCO reader) call :meth:`NativeLibrary.try_load` and
take that path when it returns None.

A binary wheel carries the libraries prebuilt (:mod:`~feedline.core.native.prebuilt`): a
:class:`NativeLibrary` opens the prebuilt one for this CPU when there is one and compiles only
otherwise. :attr:`NativeLibrary.origin` and :meth:`NativeLibrary.status` say which path runs
(``feedline build-kernels --status`` prints them).

Environment:
    ``FEEDLINE_NATIVE=0``: :meth:`NativeLibrary.try_load` never builds or opens a library (the
    CPU kernels and the COCO reader use their pure-Python paths).
    ``FEEDLINE_PREBUILT=0``: compile even where a prebuilt library is installed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from feedline.core.native.build import (
    C_COMPILER,
    Compiler,
    NativeBuildError,
    build_library,
    cache_dir,
    library_path,
)
from feedline.core.native.prebuilt import Prebuilt, find_prebuilt, source_digest

__all__ = [
    "COMPILED",
    "FAST_PATH_HINT",
    "PREBUILT",
    "UNAVAILABLE",
    "NativeLibrary",
    "declarations",
    "native_enabled",
    "open_library",
]

#: :attr:`NativeLibrary.origin` of a library opened from the installed package's ``_prebuilt``.
PREBUILT = "prebuilt"
#: :attr:`NativeLibrary.origin` of a library compiled on this machine (now or before, cached).
COMPILED = "compiled here"
#: :meth:`NativeLibrary.status` of a library that cannot be built or opened here.
UNAVAILABLE = "unavailable"
#: How a user whose kernels fall back gets the compiled ones.
FAST_PATH_HINT = (
    "for the compiled kernels install feedline's binary wheel "
    "(pip install --only-binary feedline feedline; Linux x86-64 and AArch64), or a C compiler "
    "and libjpeg-turbo's headers (e.g. apt install gcc libjpeg-dev) and run "
    "`feedline build-kernels`; `feedline build-kernels --status` shows which path each "
    "library runs"
)

_LOG = logging.getLogger("feedline")


@functools.cache
def native_enabled() -> bool:
    """False when ``FEEDLINE_NATIVE`` is set to ``0``/``false``/``no``/``off``.

    Read once per process (kernels ask for every sample); call ``native_enabled.cache_clear()``
    after changing the variable at run time.
    """
    return os.environ.get("FEEDLINE_NATIVE", "1").strip().lower() not in ("0", "false", "no", "off")


def open_library(name: str, header: Path, build: Callable[[], Path]) -> tuple[Any, Any]:
    """``(ffi, lib)``: ``header``'s :func:`declarations`, the library from ``build()`` opened.

    Raises:
        NativeBuildError: cffi is missing, the header does not parse, building or opening failed.
    """
    ffi = declarations(name, header)
    try:
        return ffi, ffi.dlopen(str(build()))
    except OSError as error:
        raise NativeBuildError(f"opening {name} failed: {error}") from None


def declarations(name: str, header: Path) -> Any:
    """A cffi ``FFI`` holding ``header``'s declarations (ABI mode).

    The first call for a header (per cffi version) parses it and writes cffi's out-of-line
    module for it into the cache (``<cache>/_<name>_ffi_<hash>.py``); later calls, in any
    process, import that module. A module that does not import (a damaged file) is written
    again; where the cache cannot be written the parsed declarations are used as they are.

    Raises:
        NativeBuildError: cffi is missing or the header does not parse.
    """
    try:
        import _cffi_backend
    except ImportError:
        raise NativeBuildError(f"{name} needs cffi: pip install cffi") from None
    text = header.read_text()
    digest = hashlib.sha256(f"{_cffi_backend.__version__}\n{text}".encode()).hexdigest()[:20]
    module = f"_{name}_ffi_{digest}"
    path = cache_dir() / f"{module}.py"
    if path.is_file():
        ffi = _imported(module, path)
        if ffi is not None:
            return ffi
    parsed = _parsed(name, text)
    parsed.set_source(module, None, compiler_verbose=False)
    with contextlib.suppress(OSError):  # an unwritable cache: parsed again next time
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent) as scratch:
            written = Path(scratch) / path.name
            parsed.emit_python_code(str(written))
            os.replace(written, path)
    return parsed


def _imported(module: str, path: Path) -> Any:
    """The ``ffi`` of the out-of-line module at ``path``, or None if it does not import."""
    try:
        spec = importlib.util.spec_from_file_location(module, path)
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return loaded.ffi
    except Exception:  # whatever a damaged file raises: the caller writes it again
        return None


def _parsed(name: str, text: str) -> Any:
    """A new ``cffi.FFI`` with ``text`` parsed by cffi's C parser."""
    import cffi

    ffi = cffi.FFI()
    try:
        ffi.cdef(text)
    except (cffi.CDefError, cffi.FFIError) as error:
        raise NativeBuildError(f"opening {name} failed: {error}") from None
    return ffi


class NativeLibrary:
    """A shared library built on first use and opened with cffi.

    Args:
        name: the library's name (the cache file's prefix).
        sources: the files to compile.
        header: the header declaring the entry points; passed to ``cffi.FFI.cdef`` (so it must
            hold plain declarations only) and found by the sources through ``-I``.
        libraries: system libraries to link (``-l<name>``).
        optional: an accelerator many machines lack (e.g. one that needs a library's headers):
            falling back is reported at INFO level instead of WARNING.
        compiler: what builds it (default: the system C compiler, for this CPU).
        includes: other headers the sources include (their content is part of the cache key).
        override_env: a variable that, when set, names a prebuilt library to open instead.
        fallback: what running without it costs, for :meth:`status` and the fallback warning
            (e.g. ``"the train pipeline runs about 2× slower"``).
    """

    def __init__(
        self,
        name: str,
        sources: Sequence[Path],
        header: Path,
        libraries: Sequence[str] = (),
        optional: bool = False,
        *,
        compiler: Compiler = C_COMPILER,
        includes: Sequence[Path] = (),
        override_env: str | None = None,
        fallback: str = "",
    ) -> None:
        self.name = name
        self.sources = tuple(sources)
        self.header = header
        self.libraries = tuple(libraries)
        self.optional = optional
        self.compiler = compiler
        self.headers = (header, *includes)
        self.override_env = override_env
        self.fallback = fallback
        self.origin: str | None = None  # PREBUILT or COMPILED once opened
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None
        self._failure: str | None = None  # the first build's error message
        self._warned = False

    def digest(self) -> str:
        """The sha256 of the sources and headers: what a prebuilt library must be built from."""
        return source_digest((*self.sources, *self.headers))

    def prebuilt(self) -> Prebuilt | None:
        """The installed package's prebuilt library for this CPU, if it has one for these
        sources (and neither an override variable nor ``FEEDLINE_PREBUILT=0`` says otherwise)."""
        if self.override_env and os.environ.get(self.override_env):
            return None
        return find_prebuilt(self.name, self.digest())

    def locate(self) -> tuple[Path, str]:
        """``(path, origin)``: the prebuilt library for this CPU, else :meth:`build`'s.

        Raises:
            NativeBuildError: there is no prebuilt library and building failed.
        """
        found = self.prebuilt()
        if found is not None:
            return found.path, PREBUILT
        return self.build(), COMPILED

    def path(self) -> Path:
        """Where this library is (or will be) cached for this compiler.

        Raises:
            NativeBuildError: no candidate compiler runs.
        """
        return library_path(
            self.name, self.sources, self.compiler, headers=self.headers, libraries=self.libraries
        )

    def build(self) -> Path:
        """The library's path, compiled first unless it is cached (or overridden).

        Raises:
            NativeBuildError: what was tried, and the compiler's output if it failed.
        """
        return build_library(
            self.name,
            self.sources,
            self.compiler,
            headers=self.headers,
            libraries=self.libraries,
            override_env=self.override_env,
        )

    def load(self) -> tuple[Any, Any]:
        """``(ffi, lib)``: the library opened with cffi, built first if needed.

        Raises:
            NativeBuildError: building or opening failed. The failure is remembered: later
                calls raise a new error with the same message at once, without trying again.
        """
        loaded = self._loaded  # once set it never changes: no lock on the per-sample path
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is not None:
                return self._loaded
            if self._failure is not None:
                # A new exception each time: raising a kept one again would chain every
                # caller's frames (and the arrays they hold) onto its traceback for good.
                raise NativeBuildError(self._failure)
            try:
                self._loaded = self._open()
            except NativeBuildError as error:
                self._failure = str(error)
                raise
            return self._loaded

    def _open(self) -> tuple[Any, Any]:
        origin = COMPILED

        def locate() -> Path:
            nonlocal origin
            path, origin = self.locate()
            return path

        loaded = open_library(self.name, self.header, locate)
        self.origin = origin
        return loaded

    def status(self) -> str:
        """Which path this library's callers run, in words: ``"prebuilt (x86-64-v3)"``,
        ``"compiled here (<path>)"``, or ``"unavailable — ..."`` naming what the fallback costs.

        Opens the library (so it compiles, as on first use, when there is no prebuilt one).
        """
        if not native_enabled():
            return f"{UNAVAILABLE} — {self._cost()}; disabled by FEEDLINE_NATIVE=0"
        try:
            self.load()
        except NativeBuildError as error:
            return f"{UNAVAILABLE} — {self._cost()}; {error}"
        if self.origin == PREBUILT:
            found = self.prebuilt()
            return f"{PREBUILT} ({found.target})" if found else PREBUILT
        try:
            return f"{COMPILED} ({self.path()})"
        except NativeBuildError:  # opened through the override variable, no compiler
            return COMPILED

    def _cost(self) -> str:
        cost = f", {self.fallback}" if self.fallback else ""
        return f"using the NumPy/Pillow path{cost}"

    def try_load(self) -> tuple[Any, Any] | None:
        """Like :meth:`load`, but None when the library is disabled with ``FEEDLINE_NATIVE=0``
        or cannot be built.

        The first failure is logged once (a warning, or INFO for an ``optional`` library) and
        remembered: from then on this returns None at once, without building, raising or
        locking, so callers take their fallback exactly as with ``FEEDLINE_NATIVE=0``.
        """
        if not native_enabled():
            return None
        loaded = self._loaded
        if loaded is not None:
            return loaded
        if self._failure is not None:
            return None
        try:
            return self.load()
        except NativeBuildError as error:
            with self._lock:
                warn, self._warned = not self._warned, True
            if warn:
                level = logging.INFO if self.optional else logging.WARNING
                _LOG.log(
                    level,
                    "%s falls back to slower kernels for the rest of this process%s, as with "
                    "FEEDLINE_NATIVE=0 (which also silences this message); %s. Cause: %s",
                    self.name,
                    f" ({self.fallback})" if self.fallback else "",
                    FAST_PATH_HINT,
                    error,
                )
            return None
