"""The one build module of feedline's compiled kernels: compile sources into a cached ``.so``.

:func:`build_library` serves every native build: the C kernels (system C compiler) and the GPU
plugin's CUDA kernels (nvcc) alike. A :class:`Compiler` says which commands to try, which
environment variable replaces them and which flags to pass; the library is cached as
``<cache>/<name>-<key>.so``, where the key hashes the sources (and headers), the flags, the
libraries, the compiler's version and the compiler's own fingerprint (e.g. the CPU's features
for ``-march=native``). A build writes a temporary file and renames it, so processes that build
at the same time never see a partial library. An override variable (e.g. ``FEEDLINE_CUDA_LIB``)
may name a prebuilt library instead. When nothing works, one :class:`NativeBuildError` lists
everything that was tried.

Example (a CUDA build)::

    NVCC = Compiler("CUDA compiler", ("nvcc",), env="NVCC",
                    flags=("-O3", "-shared", "-Xcompiler", "-fPIC"))
    path = build_library("feedline_cuda", [kernels_cu], NVCC, headers=[header],
                         override_env="FEEDLINE_CUDA_LIB")

Environment:
    ``FEEDLINE_CACHE_DIR``: where libraries are cached (default ``$XDG_CACHE_HOME/feedline``,
    i.e. ``~/.cache/feedline``).
    ``FEEDLINE_CPU_TARGET``: the ``-march`` of the C kernels (default ``native``; e.g.
    ``x86-64`` for kernels any x86-64 CPU runs).
    ``CC``: the C compiler command (default: the first of ``cc``, ``gcc``, ``clang`` found).
"""

from __future__ import annotations

import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "C_COMPILER",
    "Compiler",
    "NativeBuildError",
    "build_library",
    "cache_dir",
    "cached_build",
    "cached_path",
    "cpu_c_flags",
    "cpu_signature",
    "cpu_target",
    "library_path",
]


class NativeBuildError(RuntimeError):
    """A compiled library could not be built or opened."""


def cache_dir() -> Path:
    """The folder compiled libraries are cached in."""
    configured = os.environ.get("FEEDLINE_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "feedline"


def cpu_signature() -> str:
    """What ``-march=native`` depends on: the machine and, on Linux, the CPU's feature flags."""
    parts = [platform.machine()]
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            parts += [line for line in info if line.startswith(("flags", "Features"))][:1]
    except OSError:
        parts.append(platform.processor())
    return "\n".join(parts)


@dataclass(frozen=True)
class Compiler:
    """A compiler to build shared libraries with.

    Attributes:
        kind: what it is, for messages (``"C compiler"``, ``"CUDA compiler"``).
        candidates: commands tried in order when ``env`` is unset: a name looked up on ``PATH``
            or a path.
        env: the variable whose value (a command line, split like a shell would) replaces the
            candidates.
        flags: passed before the sources (part of the cache key).
        link_flags: passed after the sources and libraries (part of the cache key).
        fingerprint: extra text the output depends on (part of the cache key), e.g.
            :func:`cpu_signature` for ``-march=native``.
    """

    kind: str
    candidates: tuple[str, ...]
    env: str | None = None
    flags: tuple[str, ...] = ()
    link_flags: tuple[str, ...] = ()
    fingerprint: Callable[[], str] | None = None

    def resolve(self, tried: list[str]) -> tuple[list[str], str] | None:
        """``(command, version)`` of the first candidate that runs ``--version``; None (with
        each attempt appended to ``tried``) when none does."""
        configured = os.environ.get(self.env) if self.env else None
        if configured:
            commands = [(f"${self.env}={configured!r}", shlex.split(configured))]
        else:
            if self.env:
                tried.append(f"${self.env}: not set")
            commands = [(name, [name]) for name in self.candidates]
        for label, command in commands:
            program = shutil.which(command[0]) if command else None
            if program is None:
                tried.append(f"{self.kind} {label}: not found")
                continue
            try:
                done = subprocess.run(
                    [program, *command[1:], "--version"],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=True,
                )
            except (OSError, subprocess.SubprocessError) as error:
                tried.append(f"{self.kind} {label}: does not run ({error})")
                continue
            return [program, *command[1:]], done.stdout
        return None


def cpu_target() -> str:
    """The ``-march`` the C kernels are built for: ``$FEEDLINE_CPU_TARGET``, default ``native``
    (this CPU). A generic target such as ``x86-64`` builds kernels any CPU of the family runs
    (CI builds them once that way, so code that only works with one CPU's features is caught)."""
    return os.environ.get("FEEDLINE_CPU_TARGET", "").strip() or "native"


def cpu_c_flags(target: str, machine: str | None = None) -> tuple[str, ...]:
    """The C kernels' compiler flags for ``-march=<target>`` on ``machine`` (``x86_64``,
    ``aarch64``, ...; default: this one). ``tools/build_wheels.py`` builds the wheels' prebuilt
    libraries with them too, for another machine when it cross-compiles."""
    flags = ("-O3", f"-march={target}", "-ffp-contract=off", "-fno-math-errno", "-shared", "-fPIC")
    if (machine or platform.machine()).lower() in ("x86_64", "amd64"):
        # Full-width AVX-512 where the CPU has it (gcc defaults to 256 bits): the resampler's
        # vertical pass runs ~40% faster; the option is ignored on CPUs without AVX-512.
        flags += ("-mprefer-vector-width=512",)
    return flags


#: The system C compiler, building for this CPU (or for ``$FEEDLINE_CPU_TARGET``, read when
#: this module is imported).
C_COMPILER = Compiler(
    "C compiler",
    ("cc", "gcc", "clang"),
    env="CC",
    flags=cpu_c_flags(cpu_target()),
    link_flags=("-lm",),
    fingerprint=cpu_signature if cpu_target() == "native" else None,
)


def _compiler_key(
    compiler: Compiler, resolved: tuple[list[str], str], libraries: Sequence[str]
) -> list[str]:
    """What a library built by ``compiler`` (resolved to ``(command, version)``) depends on
    besides its files: the command line too, so ``CC="gcc -m32"`` does not reuse gcc's."""
    command, version = resolved
    return [
        shlex.join((*command, *compiler.flags, *compiler.link_flags, *libraries)),
        version,
        compiler.fingerprint() if compiler.fingerprint else "",
    ]


def _failure(name: str, tried: Sequence[str]) -> NativeBuildError:
    return NativeBuildError(
        f"building {name} failed; tried:\n" + "\n".join(f"  - {t}" for t in tried)
    )


def cached_path(name: str, inputs: Sequence[Path], key: Sequence[str]) -> Path:
    """``<cache>/<name>-<hash>.so``: the hash covers the contents of ``inputs`` (sources,
    headers) and the ``key`` strings (flags, compiler version, target)."""
    digest = hashlib.sha256()
    for part in (*(path.read_bytes() for path in inputs), *(k.encode() for k in key)):
        digest.update(hashlib.sha256(part).digest())
    return cache_dir() / f"{name}-{digest.hexdigest()[:20]}.so"


def cached_build(
    name: str,
    inputs: Sequence[Path],
    key: Sequence[str],
    command: Callable[[str], list[str]],
    timeout: float = 600,
    *,
    tried: Sequence[str] = (),
) -> Path:
    """Build a library into the cache unless it is there; returns its path.

    The primitive under :func:`build_library`, for builds whose command line is not one
    :class:`Compiler` call (e.g. nvcc flags that depend on the architectures it lists).

    Args:
        name: the library's name (the cache file's prefix).
        inputs: the files the library is built from (hashed into the file name).
        key: everything else the result depends on (flags, compiler version, target).
        command: given the temporary output path, the compiler command line.
        timeout: seconds the compiler may run.
        tried: earlier attempts, listed before this one if it fails.

    Raises:
        NativeBuildError: the compiler did not run or failed (its output is in the message).
    """
    target = cached_path(name, inputs, key)
    if target.exists():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as error:
        raise _failure(
            name,
            [
                *tried,
                f"the cache folder {target.parent} is not writable ({error}); "
                "set FEEDLINE_CACHE_DIR to a writable folder",
            ],
        ) from None
    os.close(fd)
    argv = command(partial)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise _failure(name, [*tried, f"{shlex.join(argv)}: failed:\n{done.stderr.strip()}"])
        os.replace(partial, target)
    except (OSError, subprocess.SubprocessError) as error:
        raise _failure(name, [*tried, f"{shlex.join(argv)}: {error}"]) from None
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def library_path(
    name: str,
    sources: Sequence[Path],
    compiler: Compiler,
    *,
    headers: Sequence[Path] = (),
    libraries: Sequence[str] = (),
) -> Path:
    """Where :func:`build_library` caches this library for this compiler (built or not).

    Raises:
        NativeBuildError: no candidate compiler runs.
    """
    tried: list[str] = []
    resolved = compiler.resolve(tried)
    if resolved is None:
        raise _failure(name, tried)
    return cached_path(name, (*sources, *headers), _compiler_key(compiler, resolved, libraries))


def build_library(
    name: str,
    sources: Sequence[Path],
    compiler: Compiler,
    *,
    headers: Sequence[Path] = (),
    include_dirs: Sequence[Path] = (),
    libraries: Sequence[str] = (),
    override_env: str | None = None,
) -> Path:
    """The path of the compiled library, built now unless it is cached (or overridden).

    Args:
        name: the library's name (the cache file's prefix).
        sources: the files to compile.
        compiler: what compiles them.
        headers: files the sources include (their content is part of the cache key).
        include_dirs: ``-I`` folders (default: the folders of ``headers``).
        libraries: system libraries to link (``-l<name>``).
        override_env: a variable that, when set, names a prebuilt library to use instead.

    Raises:
        NativeBuildError: the override names no file, no candidate compiler runs, or the
            compiler failed; the message lists each attempt (with the compiler's output).
    """
    tried: list[str] = []
    if override_env:
        override = os.environ.get(override_env)
        if override:
            path = Path(override).expanduser()
            if path.is_file():
                return path
            raise _failure(name, [f"${override_env}={override!r}: no such file"])
        tried.append(f"${override_env}: not set")
    resolved = compiler.resolve(tried)
    if resolved is None:
        raise _failure(name, tried)
    program = resolved[0]
    folders = dict.fromkeys(include_dirs or [h.parent for h in headers])

    def command(output: str) -> list[str]:
        return [
            *program,
            *compiler.flags,
            *(f"-I{folder}" for folder in folders),
            "-o",
            output,
            *map(str, sources),
            *(f"-l{library}" for library in libraries),
            *compiler.link_flags,
        ]

    key = _compiler_key(compiler, resolved, libraries)
    return cached_build(name, (*sources, *headers), key, command, tried=tried)
