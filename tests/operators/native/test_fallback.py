"""A native build that cannot succeed: the pipeline falls back once and runs in flat memory.

Each case runs a train-style pipeline (file reader → decode → random_resized_crop →
crop_mirror_normalize) for a few hundred batches in a subprocess whose cache folder is empty and
whose ``PATH`` finds no working build, and measures its peak resident memory (``VmHWM``) after a
warm-up and at the end. A failure that is tried again (or re-raised with a growing traceback) on
every call keeps every batch's arrays alive and the peak climbs by hundreds of MB.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: Peak resident memory may grow by at most this much between the warm-up and the end (MB).
#: A leak of one batch per iteration (8 float32 images of 3 x 224 x 224) gives over 900 MB.
GROWTH_LIMIT_MB = 40

PIPELINE = """
import json, logging, sys
from feedline import fn, pipeline_def, types
from feedline.data import path
from feedline.operators.native import CPU_LIBRARY, JPEG_LIBRARY

logging.basicConfig(level=logging.INFO, format="LOG %(levelname)s %(message)s")


def peak_mb():
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


@pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=1)
def train():
    jpegs, labels = fn.readers.file(file_root=str(path("file_tree")), random_shuffle=True)
    images = fn.decoders.image(jpegs, output_type=types.RGB)
    images = fn.random_resized_crop(images, size=224)
    images = fn.crop_mirror_normalize(
        images, mirror=fn.random.coin_flip(), dtype=types.FLOAT, output_layout="CHW",
        mean=[120.0] * 3, std=[60.0] * 3,
    )
    return images, labels


pipe = train()
pipe.build()
for _ in range(30):
    pipe.run()
warm = peak_mb()
for _ in range(int(sys.argv[1])):
    pipe.run()
print(json.dumps({
    "warm": warm,
    "end": peak_mb(),
    "cpu": CPU_LIBRARY.try_load() is not None,
    "jpeg": JPEG_LIBRARY.try_load() is not None,
}))
"""


def run_pipeline(tmp_path: Path, path: str, batches: int = 300) -> tuple[dict, str]:
    """Run :data:`PIPELINE` with ``PATH=path`` and an empty cache; (its figures, its log)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CC", "FEEDLINE_NATIVE", "FEEDLINE_CPU_FLAGS")
    }
    env.update(PATH=path, FEEDLINE_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run(
        [sys.executable, "-c", PIPELINE, str(batches)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def fallback_messages(log: str, name: str) -> list[str]:
    """The first line of each message saying that ``name`` falls back."""
    return [line for line in log.splitlines() if f"{name} falls back" in line]


def test_without_a_compiler_the_fallback_runs_in_flat_memory(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    figures, log = run_pipeline(tmp_path, str(empty))
    assert not figures["cpu"] and not figures["jpeg"]
    assert figures["end"] - figures["warm"] < GROWTH_LIMIT_MB, figures
    cpu = fallback_messages(log, "feedline_cpu")
    assert len(cpu) == 1 and cpu[0].startswith("LOG WARNING"), log
    assert "C compiler cc: not found" in log
    assert len(fallback_messages(log, "feedline_jpeg")) == 1, log
    assert not list((tmp_path / "cache").glob("*.so"))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_without_libjpeg_headers_the_fallback_runs_in_flat_memory(tmp_path: Path) -> None:
    # A compiler whose include path finds a jpeglib.h that stops the build, as a machine with
    # gcc but without libjpeg's development headers does.
    headers = tmp_path / "include"
    headers.mkdir()
    (headers / "jpeglib.h").write_text("#error no libjpeg headers here\n")
    tools = tmp_path / "bin"
    tools.mkdir()
    cc = tools / "cc"
    cc.write_text(f'#!/bin/sh\nexec gcc -I{headers} "$@"\n')
    cc.chmod(0o755)
    figures, log = run_pipeline(tmp_path, f"{tools}{os.pathsep}{os.environ['PATH']}")
    assert figures["cpu"] and not figures["jpeg"]
    assert figures["end"] - figures["warm"] < GROWTH_LIMIT_MB, figures
    (jpeg,) = fallback_messages(log, "feedline_jpeg")
    assert jpeg.startswith("LOG INFO") and "no libjpeg headers here" in log
    assert not fallback_messages(log, "feedline_cpu")
