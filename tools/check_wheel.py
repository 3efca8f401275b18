"""Release check of a CPU wheel: install it where no C compiler is on PATH, prove the prebuilt
kernels run, and time the train pipeline against ``FEEDLINE_NATIVE=0`` (and DALI, if given).

Usage::

    python tools/check_wheel.py DIST_FOLDER_OR_WHEEL [--dali-python PYTHON] [--data DIR]
        [--seconds 4] [--rounds 2]

Steps: a fresh venv in a scratch folder; ``pip install`` the wheel (its dependencies from the
package index); then, with ``PATH`` holding only the venv's ``bin`` (checked to have no ``cc``,
``gcc`` or ``clang``) and an empty kernel cache, ``feedline build-kernels --status`` must say
"prebuilt" for every library (else the check fails), and ``benchmarks/imagenet.py``'s train
worker runs with the prebuilt kernels and with ``FEEDLINE_NATIVE=0`` in alternating rounds. Each
round's img/s and CPU-ms per image are printed, with the prebuilt kernels' ratios (from the best
figures, and round by round), not asserted: timings on a shared machine are not a test (the CPU
time per image varies far less with the machine's load than the img/s).
``--dali-python`` names an interpreter with DALI (``nvidia.dali``) whose train worker runs in
the same rounds (it imports the benchmark's helpers from this checkout's ``src``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "benchmarks" / "imagenet.py"
COMPILERS = ("cc", "gcc", "clang")


def _wheel(given: Path) -> Path:
    if given.is_file():
        return given
    wheels = sorted(given.glob("feedline-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one feedline wheel in {given}, found {len(wheels)}")
    return wheels[0]


def _worker(
    python: str, env: dict, args: argparse.Namespace, framework: str
) -> tuple[float, float]:
    """(img/s, CPU-ms per image) of one train worker run."""
    command = [python, str(BENCHMARK), "--worker", framework, "--modes", "train", "--threads",
               "2", "--seconds", str(args.seconds), "--data", str(args.data)]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{framework} worker failed:\n{done.stderr[-3000:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    return float(row["img_s"]), float(row["cpu_ms"])


def check(wheel: Path, args: argparse.Namespace, scratch: Path) -> None:
    """Install ``wheel`` into a venv under ``scratch`` and run the checks."""
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / "bin"
    subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", str(wheel)], check=True)
    found = [name for name in COMPILERS if shutil.which(name, path=str(bin_dir))]
    if found:
        raise SystemExit(f"the check's PATH must hold no C compiler, found {found}")
    env = {
        "PATH": str(bin_dir),
        "HOME": str(scratch),
        "FEEDLINE_CACHE_DIR": str(scratch / "cache"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    status = subprocess.run(
        [bin_dir / "feedline", "build-kernels", "--status"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    print(status, end="")
    libraries = [  # the C kernels' lines (the GPU kernels come with feedline-cuda*)
        line
        for line in status.splitlines()
        if line.startswith("feedline_") and not line.startswith("feedline_gpu")
    ]
    if len(libraries) != 3 or not all(": prebuilt" in line for line in libraries):
        raise SystemExit("FAILED: not every library runs prebuilt (see the status above)")
    python = str(bin_dir / "python")
    fallback_env = {**env, "FEEDLINE_NATIVE": "0"}
    dali_env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT / "src")}
    rows: dict[str, list[tuple[float, float]]] = {
        "prebuilt": [],
        "FEEDLINE_NATIVE=0": [],
        "DALI": [],
    }
    for _ in range(args.rounds):
        rows["prebuilt"].append(_worker(python, env, args, "feedline"))
        rows["FEEDLINE_NATIVE=0"].append(_worker(python, fallback_env, args, "feedline"))
        if args.dali_python:
            rows["DALI"].append(_worker(args.dali_python, dali_env, args, "dali"))
    print("\n".join(report_lines(rows, args.seconds)))


def _ratios(ours: tuple[float, float], theirs: tuple[float, float]) -> tuple[float, float]:
    """(img/s ratio, CPU-per-image ratio) of ``ours`` over ``theirs``: both above 1 where ours
    is faster and needs less CPU per image."""
    return ours[0] / theirs[0], theirs[1] / ours[1]


def report_lines(rows: dict[str, list[tuple[float, float]]], seconds: float) -> list[str]:
    """The timing table of :func:`check`: each round's img/s and CPU-ms per image for every
    configuration measured, the best of each (highest img/s, lowest CPU-ms), and the prebuilt
    kernels' ratios against the others: from the best figures, and per round (the runs of one
    round are side by side, so they share the machine's load)."""
    names = [name for name, values in rows.items() if values]
    rounds = min(len(rows[name]) for name in names)
    lines = [
        f"train pipeline, 2 threads, batch 64, {rounds} rounds x {seconds:g} s "
        "(img/s, CPU-ms per image):",
        "  round " + "".join(f"{name:>22}" for name in names),
    ]
    for index in range(rounds):
        cells = "".join(f"{rows[n][index][0]:>11.0f} {rows[n][index][1]:>10.2f}" for n in names)
        lines.append(f"  {index + 1:<5} {cells}")
    best = {name: (max(v[0] for v in rows[name]), min(v[1] for v in rows[name])) for name in names}
    lines.append("  best  " + "".join(f"{best[n][0]:>11.0f} {best[n][1]:>10.2f}" for n in names))
    for other in names[1:]:
        speed, cpu = _ratios(best["prebuilt"], best[other])
        paired = [_ratios(rows["prebuilt"][i], rows[other][i]) for i in range(rounds)]
        lines.append(
            f"prebuilt vs {other}: {speed:.2f}x the img/s, {cpu:.2f}x less CPU per image "
            "(best figures); per round: img/s "
            + " ".join(f"{pair[0]:.2f}x" for pair in paired)
            + ", CPU "
            + " ".join(f"{pair[1]:.2f}x" for pair in paired)
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("wheel", type=Path, help="the wheel, or the folder holding it")
    parser.add_argument("--dali-python", default=None, help="an interpreter with nvidia.dali")
    parser.add_argument(
        "--data",
        type=Path,
        default=ROOT / "src" / "feedline" / "data" / "file_tree",
        help="JPEGs for the train pipeline (default: the package's small sample tree)",
    )
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="feedline-wheel-check-") as scratch:
        check(_wheel(args.wheel.resolve()), args, Path(scratch))


if __name__ == "__main__":
    main()
