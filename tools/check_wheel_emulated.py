"""Check a cross-built CPU wheel (e.g. Linux AArch64 built on x86-64) under qemu-user.

Usage::

    python tools/check_wheel_emulated.py WHEEL_OR_FOLDER --sysroot DIR [--emulator qemu-aarch64]

``DIR`` holds the target's CPython (``DIR/usr/bin/python3.X``); the C libraries it needs come
from ``DIR`` or, as qemu falls back to them, from this machine's multiarch folders. On Debian::

    apt-get install qemu-user libc6:arm64 libexpat1:arm64 zlib1g:arm64 libffi8:arm64 \\
        libbz2-1.0:arm64 liblzma5:arm64 libsqlite3-0:arm64 libncursesw6:arm64 \\
        libreadline8:arm64 libuuid1:arm64 libdb5.3:arm64 libssl3:arm64 libstdc++6:arm64
    apt-get download python3.11-minimal:arm64 libpython3.11-minimal:arm64 \\
        libpython3.11-stdlib:arm64
    for deb in *_arm64.deb; do dpkg -x "$deb" DIR; done

Steps:

1. ``pip install --target`` the wheel and its dependencies' wheels for the target machine and
   Python (``--platform``/``--only-binary``: nothing is compiled) into a scratch folder.
2. Under the emulator, with a ``PATH`` holding no compiler and an empty kernel cache,
   ``feedline build-kernels --status`` must report every C library "prebuilt".
3. ``tools/wheel_probe.py`` runs under the emulator (the kernels, and libjpeg-turbo from the
   wheel's ``feedline.libs``, must be the ones mapped) and on this machine from the checkout's
   sources; the outputs of its pipeline must be bit-identical (the kernels are built with
   ``-ffp-contract=off``, so both machines round alike; the NumPy/Pillow path gives other
   numbers, so equal outputs mean the kernels ran).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tools" / "wheel_probe.py"
LIBRARIES = ("feedline_cpu", "feedline_jpeg", "feedline_coco")


def wheel_platforms(wheel: Path) -> tuple[str, list[str]]:
    """The wheel's machine and the manylinux tags pip may take dependencies for (those of the
    wheel's glibc and every older one)."""
    found = re.search(r"manylinux_2_(\d+)_(\w+)\.whl$", wheel.name)
    if found is None:
        raise SystemExit(f"{wheel.name}: not a manylinux_2_NN wheel (repair it with auditwheel)")
    newest, machine = int(found.group(1)), found.group(2)
    tags = [f"manylinux_2_{minor}_{machine}" for minor in range(newest, 16, -1)]
    return machine, [*tags, f"manylinux2014_{machine}"]


def sysroot_python(sysroot: Path) -> Path:
    """The sysroot's ``usr/bin/python3.X`` (the newest, if several)."""
    found = sorted(sysroot.glob("usr/bin/python3.*[0-9]"), key=lambda p: int(p.name.split(".")[1]))
    if not found:
        raise SystemExit(f"no usr/bin/python3.X in {sysroot}")
    return found[-1]


def install(wheel: Path, site: Path, machine: str, python: Path) -> None:
    """``pip install --target site`` the wheel and its dependencies for the target."""
    _, platforms = wheel_platforms(wheel)
    version = python.name.removeprefix("python")
    abi = "cp" + version.replace(".", "")
    options = [f"--platform={tag}" for tag in platforms]
    command = [sys.executable, "-m", "pip", "install", "-q", "--target", str(site),
               "--only-binary=:all:", "--implementation", "cp", "--python-version", version,
               "--abi", abi, *options, str(wheel)]  # fmt: skip
    print(f"installing for {machine}, CPython {version}", flush=True)
    subprocess.run(command, check=True)


def emulated(args: argparse.Namespace, python: Path, env: dict, *argv: str) -> str:
    """Run ``python argv`` under the emulator; its stdout."""
    emulator = shutil.which(args.emulator)
    if emulator is None:
        raise SystemExit(f"no {args.emulator} on PATH (Debian: apt-get install qemu-user)")
    command = [emulator, "-L", str(args.sysroot), str(python), *argv]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def check(args: argparse.Namespace, scratch: Path) -> None:
    """Install the wheel under ``scratch`` and run the status and probe checks."""
    wheel = args.wheel.resolve()
    if wheel.is_dir():
        wheels = sorted(wheel.glob("feedline-*.whl"))
        if len(wheels) != 1:
            raise SystemExit(f"expected one feedline wheel in {wheel}, found {len(wheels)}")
        wheel = wheels[0]
    machine, _ = wheel_platforms(wheel)
    python = sysroot_python(args.sysroot)
    site = scratch / "site"
    install(wheel, site, machine, python)
    (scratch / "bin").mkdir()
    env = {
        "PATH": str(scratch / "bin"),
        "PYTHONPATH": str(site),
        "HOME": str(scratch),
        "FEEDLINE_CACHE_DIR": str(scratch / "cache"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    status = emulated(args, python, env, "-c", "from feedline.cli import main; main()",
                      "build-kernels", "--status")  # fmt: skip
    print(status, end="")
    prebuilt = [f"{name}: prebuilt" for name in LIBRARIES]
    if not all(any(line.startswith(p) for line in status.splitlines()) for p in prebuilt):
        raise SystemExit("FAILED: not every C library runs prebuilt (see the status above)")
    there = json.loads(emulated(args, python, env, str(PROBE)).splitlines()[-1])
    local_env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    here = subprocess.run([sys.executable, str(PROBE)], env=local_env, capture_output=True,
                          text=True, check=True, timeout=600).stdout  # fmt: skip
    here = json.loads(here.splitlines()[-1])
    kernels = [Path(p) for p in there["mapped"] if "/feedline/_prebuilt/" in p]
    jpeg = [Path(p) for p in there["mapped"] if "/feedline.libs/libjpeg" in p]
    problems = [] if there["machine"] == machine else [f"ran on {there['machine']}"]
    if sorted(p.name.split("-")[0] for p in kernels) != sorted(LIBRARIES):
        problems.append(f"mapped kernels {there['mapped']}")
    if not jpeg:
        problems.append("the wheel's libjpeg-turbo is not the one mapped")
    differing = sum(a != b for a, b in zip(there["digests"], here["digests"], strict=True))
    if differing:
        problems.append(f"{differing} of {len(here['digests'])} outputs differ from this machine's")
    if problems:
        raise SystemExit("FAILED: " + "; ".join(problems))
    print(f"{machine} (emulated): mapped {', '.join(p.name for p in kernels + jpeg)}")
    print(f"{len(here['digests'])} pipeline outputs bit-identical to {here['machine']}'s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("wheel", type=Path, help="the repaired wheel, or the folder holding it")
    parser.add_argument("--sysroot", type=Path, required=True, help="the target's CPython root")
    parser.add_argument("--emulator", default="qemu-aarch64", help="the qemu-user binary")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="feedline-wheel-emulated-") as scratch:
        check(args, Path(scratch))


if __name__ == "__main__":
    main()
