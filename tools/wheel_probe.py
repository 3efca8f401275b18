"""Open feedline's C kernels and run a small train-like pipeline; print one JSON object.

Run by ``tools/check_wheel_emulated.py``, once by the emulated interpreter of an installed
foreign wheel and once by this machine's interpreter, to compare the two. The JSON holds the
machine, the file each C library was opened from, the kernel and libjpeg files the process has
mapped (``/proc/self/maps``), and a sha256 of every output sample of two batches of a
decode / random-crop / resize / crop-mirror-normalise pipeline over the package's sample images.
"""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path

import numpy as np

import feedline
from feedline import fn, pipeline_def
from feedline.operators.native import CPU_LIBRARY, JPEG_LIBRARY
from feedline.readers.coco.segmentations import LIBRARY as COCO_LIBRARY

IMAGES = Path(feedline.__file__).parent / "data" / "file_tree"


@pipeline_def(batch_size=8, num_threads=2, device_id=None, seed=7)
def probe_pipeline():
    """A random-crop decode, resize and normalise (the ROI JPEG decoder, resampler and
    normaliser), and a full decode resized by its shorter side."""
    jpegs, labels = fn.readers.file(file_root=str(IMAGES), random_shuffle=False)
    cropped = fn.resize(fn.decoders.image_random_crop(jpegs, seed=3), resize_x=96, resize_y=96)
    normalized = fn.crop_mirror_normalize(
        cropped,
        crop=(80, 80),
        mean=[124.0, 117.0, 104.0],
        std=[58.0, 57.0, 57.0],
        mirror=fn.random.coin_flip(seed=5),
    )
    shorter = fn.resize(fn.decoders.image(jpegs), resize_shorter=64)
    return normalized, shorter, labels


def main() -> None:
    opened = {}
    for library in (CPU_LIBRARY, JPEG_LIBRARY, COCO_LIBRARY):
        library.load()
        opened[library.name] = str(library.locate()[0])
    pipe = probe_pipeline()
    pipe.build()
    digests = []
    for _ in range(2):
        batches = pipe.run()
        for index in range(len(batches[0])):
            data = b"".join(np.ascontiguousarray(b.at(index)).tobytes() for b in batches)
            digests.append(hashlib.sha256(data).hexdigest()[:16])
    maps = Path("/proc/self/maps").read_text().splitlines()
    mapped = {line.split()[-1] for line in maps if "feedline_" in line or "libjpeg" in line}
    report = {"machine": platform.machine(), "opened": opened, "mapped": sorted(mapped)}
    print(json.dumps({**report, "digests": digests}))


if __name__ == "__main__":
    main()
