"""Compiled kernels: build C sources into a shared library once, cache it, open it with cffi.

A :class:`NativeLibrary` names its sources and a header of plain declarations. On first use it
compiles them with the system C compiler into ``<cache>/<name>-<key>.so``, where the key hashes
the sources, the header, the flags, the compiler's version and the CPU's features (the library is
built for this CPU with ``-march=native``). Later uses, in this process or any other, open the
cached file. The build writes a temporary file and renames it, so processes that build at the
same time never see a partial library.

Environment:
    ``FEEDLINE_CACHE_DIR``: where libraries are cached (default ``~/.cache/feedline``).
    ``FEEDLINE_NATIVE=0``: never build or open compiled CPU kernels (use the NumPy/Pillow paths).
    ``CC``: the C compiler (default: ``cc``, ``gcc`` or ``clang``, the first on ``PATH``).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "NativeBuildError",
    "NativeLibrary",
    "cache_dir",
    "cached_build",
    "native_enabled",
    "open_library",
]

_LOG = logging.getLogger("feedline")
_FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC")
if platform.machine().lower() in ("x86_64", "amd64"):
    # Full-width AVX-512 where the CPU has it (gcc defaults to 256 bits): the resampler's
    # vertical pass runs ~40% faster; the option is ignored on CPUs without AVX-512.
    _FLAGS += ("-mprefer-vector-width=512",)


class NativeBuildError(RuntimeError):
    """A compiled library could not be built or opened."""


@functools.cache
def native_enabled() -> bool:
    """False when ``FEEDLINE_NATIVE`` is set to ``0``/``false``/``no``/``off``.

    Read once per process (kernels ask for every sample); call ``native_enabled.cache_clear()``
    after changing the variable at run time.
    """
    return os.environ.get("FEEDLINE_NATIVE", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_dir() -> Path:
    """The folder compiled libraries are cached in."""
    configured = os.environ.get("FEEDLINE_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "feedline"


def _compiler() -> list[str]:
    configured = os.environ.get("CC")
    if configured:
        return shlex.split(configured)
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return [path]
    raise NativeBuildError("no C compiler found: install gcc or clang, or set CC")


def _cpu_signature() -> str:
    """What ``-march=native`` depends on: the machine and, on Linux, the CPU's feature flags."""
    parts = [platform.machine()]
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            parts += [line for line in info if line.startswith(("flags", "Features"))][:1]
    except OSError:
        parts.append(platform.processor())
    return "\n".join(parts)


def _compiler_version(compiler: list[str]) -> str:
    try:
        done = subprocess.run(
            [*compiler, "--version"], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError) as error:
        command = shlex.join(compiler)
        raise NativeBuildError(f"C compiler {command!r} does not run: {error}") from None
    return done.stdout


def cached_path(name: str, inputs: Sequence[Path], key: Sequence[str]) -> Path:
    """``<cache>/<name>-<hash>.so``: the hash covers the contents of ``inputs`` (sources,
    headers) and the ``key`` strings (flags, compiler version, target)."""
    digest = hashlib.sha256()
    for part in (*(p.read_bytes() for p in inputs), *(k.encode() for k in key)):
        digest.update(hashlib.sha256(part).digest())
    return cache_dir() / f"{name}-{digest.hexdigest()[:20]}.so"


def cached_build(
    name: str,
    inputs: Sequence[Path],
    key: Sequence[str],
    command: Callable[[str], list[str]],
    timeout: float = 300,
) -> Path:
    """Build a library into the cache unless it is there; returns its path.

    Args:
        name: the library's name (the cache file's prefix).
        inputs: the files the library is built from (hashed into the file name).
        key: everything else the result depends on (flags, compiler version, target).
        command: given the temporary output path, the compiler command line.
        timeout: seconds the compiler may run.

    Raises:
        NativeBuildError: the compiler is missing or failed (its output is in the message).
    """
    target = cached_path(name, inputs, key)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    try:
        argv = command(partial)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise NativeBuildError(
                f"building {name} failed ({shlex.join(argv)}):\n{done.stderr.strip()}"
            )
        os.replace(partial, target)
    except (OSError, subprocess.SubprocessError) as error:
        raise NativeBuildError(f"building {name} failed: {error}") from None
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def open_library(name: str, header: Path, build: Callable[[], Path]) -> tuple[Any, Any]:
    """``(ffi, lib)``: ``header`` read by cffi (ABI mode), the library from ``build()`` opened.

    Raises:
        NativeBuildError: cffi is missing, the header does not parse, building or opening failed.
    """
    try:
        import cffi
    except ImportError:
        raise NativeBuildError(f"{name} needs cffi: pip install cffi") from None
    ffi = cffi.FFI()
    try:
        ffi.cdef(header.read_text())
        return ffi, ffi.dlopen(str(build()))
    except (OSError, cffi.CDefError, cffi.FFIError) as error:
        raise NativeBuildError(f"opening {name} failed: {error}") from None


class NativeLibrary:
    """A shared library built from C sources on first use.

    Args:
        name: the library's name (the cache file's prefix).
        sources: the ``.c`` files.
        header: the header declaring the entry points; passed to ``cffi.FFI.cdef`` (so it must
            hold plain declarations only) and found by the sources through ``-I``.
        libraries: system libraries to link (``-l<name>``).
        optional: an accelerator many machines lack (e.g. one that needs a library's headers):
            falling back is reported at INFO level instead of WARNING.
    """

    def __init__(
        self,
        name: str,
        sources: Sequence[Path],
        header: Path,
        libraries: Sequence[str] = (),
        optional: bool = False,
    ) -> None:
        self.name = name
        self.sources = tuple(sources)
        self.header = header
        self.libraries = tuple(libraries)
        self.optional = optional
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None
        self._error: NativeBuildError | None = None
        self._warned = False

    def _key(self) -> list[str]:
        compiler = _compiler()
        return [" ".join((*_FLAGS, *self.libraries)), _compiler_version(compiler), _cpu_signature()]

    def path(self) -> Path:
        """Where this library is (or will be) cached for this compiler and CPU."""
        return cached_path(self.name, (*self.sources, self.header), self._key())

    def build(self) -> Path:
        """Compile the library unless it is cached; returns its path.

        Raises:
            NativeBuildError: no compiler, or the compiler failed (its output is in the message).
        """

        def command(partial: str) -> list[str]:
            return [
                *_compiler(),
                *_FLAGS,
                f"-I{self.header.parent}",
                "-o",
                partial,
                *map(str, self.sources),
                *(f"-l{library}" for library in self.libraries),
                "-lm",
            ]

        return cached_build(self.name, (*self.sources, self.header), self._key(), command)

    def load(self) -> tuple[Any, Any]:
        """``(ffi, lib)``: the library opened with cffi, built first if needed.

        Raises:
            NativeBuildError: building or opening failed (remembered: later calls raise at once).
        """
        loaded = self._loaded  # once set it never changes: no lock on the per-sample path
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is not None:
                return self._loaded
            if self._error is not None:
                raise self._error
            try:
                self._loaded = self._open()
            except NativeBuildError as error:
                self._error = error
                raise
            return self._loaded

    def _open(self) -> tuple[Any, Any]:
        return open_library(self.name, self.header, self.build)

    def try_load(self) -> tuple[Any, Any] | None:
        """Like :meth:`load`, but None (after one logged warning) when the library is disabled
        with ``FEEDLINE_NATIVE=0`` or cannot be built."""
        if not native_enabled():
            return None
        try:
            return self.load()
        except NativeBuildError as error:
            if not self._warned:
                self._warned = True
                level = logging.INFO if self.optional else logging.WARNING
                _LOG.log(level, "%s; falling back to slower kernels", error)
            return None
