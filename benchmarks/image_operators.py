"""Image-processing operators, one at a time: feedline vs DALI CPU, images per second.

Each operator runs alone on decoded photos fed by ``external_source`` (the same arrays for both
frameworks): ``laplacian``, ``filter`` with a 3x3 and a 7x7 filter, ``warp_perspective``,
``equalize``, ``clahe``, ``water`` and ``jpeg_compression_distortion``, on 224x224 images and
on the full-size photos (about 500x375). Every configuration runs in its own process; the
frameworks take turns for ``--rounds`` rounds and the best round counts. DALI runs in the
interpreter given by ``--dali-python`` (default: ``$DALI_PYTHON``, else ``/work/dali-venv``'s,
when it exists); without it only feedline's rates are printed.

Data: ``$FEEDLINE_SHARED_DATA/photos`` or ``--data DIR`` (JPEG or PNG files), else the sample
images bundled with feedline.

Besides img/s each row prints the CPU time per image (the process's CPU time over the images),
which depends far less on what else the host runs. Measured 2026-11-28 (``--rounds 2 --seconds
2``, 2 threads, batch 32, DALI 2.4 CPU, a 2-core VM shared with other jobs at a load average of
10-13, so img/s varied by up to 2x between runs); img/s ratio and CPU-time ratio (DALI's over
feedline's, >1 means feedline needs less), 224x224 / full size:

* laplacian 9.7x / 5.3x (CPU 4.5x / 4.3x): two OpenCV sepFilter2D passes per image;
* water 2.2x / 2.4x (CPU 3.0x / 3.0x): the source maps are computed once per image size;
* clahe 1.9x / 1.2x (CPU 1.2x / 0.94x).

The cheap operators, before and after the executor's per-sample costs were cut (one copy of
the external source's batch into recycled memory, ragged batches carved from recycled blocks,
glibc keeping freed blocks for OpenCV's temporaries, runs of samples per pool claim, a leaner
per-sample loop). Same day, ``--rounds 3 --seconds 2``, load average 18-25 (img/s are the
scheduler's more than the code's; CPU time is the comparable figure). feedline / DALI, CPU us
per image, and the ratios (img/s; CPU, DALI's over feedline's)::

                                         before                       after
    operator                     size   CPU us      img/s  CPU        CPU us      img/s  CPU
    equalize                      224   257 / 201   0.28x  0.78x      220 / 210   0.38x  0.95x
    equalize                     full   2394 / 1368 0.62x  0.57x      1633 / 1389 0.90x  0.85x
    filter 3x3                    224   277 / 168   0.24x  0.61x      165 / 163   0.61x  0.99x
    filter 3x3                   full   1868 / 997  0.74x  0.53x      1070 / 942  0.74x  0.88x
    filter 7x7                    224   612 / 527   0.65x  0.86x      559 / 573   0.64x  1.03x
    filter 7x7                   full   4586 / 3875 1.40x  0.85x      3664 / 3645 1.27x  0.99x
    jpeg_compression_distortion   224   456 / 442   0.97x  0.97x      427 / 424   1.42x  0.99x
    jpeg_compression_distortion  full   3400 / 2549 1.12x  0.75x      2888 / 2391 1.16x  0.83x
    warp_perspective              224   487 / 448   0.92x  0.92x      430 / 446   0.96x  1.04x
    warp_perspective             full   3755 / 3359 1.17x  0.89x      3942 / 3133 0.88x  0.79x

An earlier run of the "after" code at load 18-25 gave CPU ratios 0.86 / 1.05 (equalize), 0.93 /
0.78 (filter 3x3), 1.06 / 0.69 (filter 7x7), 1.01 / 0.84 (jpeg) and 1.04 / 0.98 (warp): at 224x224
feedline now spends about DALI's CPU time per image; on full-size photos 0.8-1.0x of it, where
OpenCV's own work (split/equalizeHist/merge for equalize, a BGR round trip around the JPEG codec)
costs more than DALI's kernels. The img/s of cheap operators at 224x224 stay behind DALI's on
this machine (equalize 0.38-0.45x): the pool's threads meet the GIL around each of OpenCV's
calls (five per image for equalize), and the iteration cadence of ``prefetch_queue_depth=2``
leaves the helper thread waiting for the next batch for much of the time (a depth of 3 or 4 gave
up to 2x the img/s at a lower CPU time per image).

``rand_augment_imagenet`` times the ImageNet training pipeline decode -> random_resized_crop
(224) -> ``auto_aug.rand_augment(n=2, m=9)`` -> crop_mirror_normalize on the photos re-encoded
as JPEG (size "full" only). Measured 2026-11-28 (``--rounds 2 --seconds 3``, 2 threads, batch
32, same shared VM at a load average of 12-13): 74 vs 45 img/s, 1.63x (CPU per image 1.58x).

``equalize`` with its compiled kernel (one call per image computing OpenCV's equalizeHist of
every channel bit for bit, instead of split, three equalizeHist and merge), measured 2026-11-28
(``--rounds 2 --seconds 2``, 2 threads, batch 32) at a load average of 1.5 and of 3.5, feedline /
DALI CPU us per image and the img/s ratio, 224x224 / full size: 133 / 175 and 1.34x, 985 / 1330
and 1.36x (load 1.5); 124 / 159 and 1.28x, 909 / 1253 and 1.41x (load 3.5). The OpenCV path it
replaces (still taken with ``FEEDLINE_NATIVE=0``) measured at load 2.3: 228 / 211 and 1.14x,
1477 / 1324 and 0.99x.

``filter`` of uint8 with its compiled kernel (OpenCV's filter2D bit for bit, 0.7-0.75x of its
CPU time single-threaded), same day and settings, feedline / DALI CPU us per image and the img/s
ratio, 3x3 224x224 / full size, then 7x7: at load 3.0, 134 / 203 and 1.36x, 830 / 923 and
1.26x; 358 / 552 and 0.85x, 2687 / 3733 and 1.31x. With ``FEEDLINE_NATIVE=0`` (filter2D, as
before) at load 3.2: 169 / 162 and 0.76x, 941 / 942 and 0.99x; 498 / 504 and 0.83x, 3865 / 3694.
A run of equalize, filter and warp_perspective together at load 4 gave CPU ratios (DALI's over
feedline's) of 1.25 / 1.63 (equalize), 1.06 / 1.25 (filter 3x3), 1.30 / 1.33 (filter 7x7) and
1.01 / 0.84 (warp_perspective, unchanged: OpenCV's warpPerspective itself is the cost, 310 us
per 224x224 image in two bare threads, 30-37 us of pipeline work around it; OpenCV's own thread
count made no difference), with img/s ratios between 0.5x and 1.7x that followed the load.
Another at load 2-3: CPU us 166 / 163 and img/s 0.94x, 908 / 1141 and 1.25x (filter 3x3);
487 / 471 and 0.95x, 3657 / 3477 and 1.16x (warp_perspective); 162 / 212 and 1.18x, 935 / 1545
and 1.63x (equalize). At 224x224 the filter kernel is about 65 of feedline's ~160 us per image;
50-58 us are the pipeline's (measured with the kernel call replaced by nothing).

Per-sample Python of the kernels cut (filter's anchor placed once per value, border buffers
prepared once, arrays handed to the compiled kernels with ``ffi.from_buffer``; equalize's
contiguous arrays skip the stride checks; warp_perspective's static ``fill_value``/``size``
resolved once; laplacian's windows built once per size, its single plane not copied, its
scaling, sum and rounding done in place, outputs bit for bit unchanged). Same day, load
average 1.1-2.7, ``--rounds 3 --seconds 2``, 224x224, before and after in back-to-back runs
(twice, in both orders), feedline CPU us per image and the CPU ratio (DALI's over feedline's):

* ``run_sample`` alone (best of 5x2000 calls, one thread, steady): filter 3x3 74 -> 67 us,
  equalize 95.5 -> 92.8 us, laplacian 337 -> ~190 us; with the compiled kernel or OpenCV
  call stubbed out: filter 14.1 -> 7.0 us, equalize 12.1 -> 4.3 us, warp_perspective 6.8 ->
  3.7 us (jpeg_compression_distortion 3.3 us, water 3.7 us: left as they are);
* laplacian 535 -> 351 and 525 -> 341 us (ratio 3.8x -> 5.5x, 3.5x -> 6.7x);
* filter 3x3 149 -> 115 and 128 -> 130 us (ratio 1.02x -> 1.70x, 1.19x -> 1.23x); filter 7x7
  ratio 1.37x -> 1.61x, 1.36x -> 1.61x; equalize and warp_perspective within the noise
  (1.27x -> 1.14x, 1.03x -> 1.28x; 0.89x -> 1.11x, 1.06x -> 1.02x): a few us per image is
  below what separate processes on this host resolve.

What is left of the ~20 us per image outside the kernels (filter 3x3 with ``run_sample``
reduced to ``sample.output``, one thread: 17.5-20 us per image, 22-31 us with two) is mostly
``external_source``'s copy of the batch into recycled memory (about 85% of those samples in a
py-spy profile: 150 KB per image at memory bandwidth; DALI copies too); the executor's own
loop (chain processing, output allocation, pool hand-offs) is about 3 us per image.

The other kernels call the same OpenCV functions as DALI's CPU operators (warpPerspective,
imencode/imdecode), writing into the batch's buffer.

Every row after all of the above, in one run on a quiet machine (2026-11-28, load average 1-2,
``--rounds 2 --seconds 2 --data`` 100 ImageNet validation photos, 2 threads, batch 32, DALI 2.4
CPU); img/s feedline / DALI and ratio, then the CPU-time ratio (DALI's over feedline's)::

    operator                      224x224                      full size
    laplacian                      3595 /   798  4.51x  5.41x   1783 /  231  7.72x  8.05x
    filter 3x3                    12975 /  8740  1.48x  1.60x   4906 / 3792  1.29x  1.38x
    filter 7x7                     5135 /  3768  1.36x  1.41x   1965 / 1122  1.75x  1.74x
    warp_perspective               5059 /  4402  1.15x  1.09x   1337 / 1349  0.99x  0.99x
    equalize                      13452 / 10870  1.24x  1.33x   4559 / 3343  1.36x  1.42x
    clahe                          2396 /  2430  0.99x  0.98x    777 /  802  0.97x  0.97x
    water                         12337 /  2506  4.92x  5.11x   2196 /  749  2.93x  2.95x
    jpeg_compression_distortion    5389 /  2925  1.84x  1.06x   1904 /  981  1.94x  1.11x
    rand_augment ImageNet pipeline                               546 /  311  1.75x  1.84x

``clahe`` and ``warp_perspective`` were at DALI's speed in that run, not above it: both
frameworks spent their time in the same OpenCV calls (RGB to Lab, CLAHE, Lab to RGB: about 225,
260-310 and 265 us of a 224x224 image's ~800; ``warpPerspective`` itself), and ``cv2``'s own
thread count (``cv2.setNumThreads(1)``) made no difference in back-to-back runs. Both now run in
feedline's compiled kernels.

``clahe``'s kernels reproduce OpenCV's 8-bit colour conversions and CLAHE bit for bit in one
call per image (about 405 us of CPU time per 224x224 image against OpenCV's 718, 1265 against
2267 at full size, one thread, in process). Two runs on 2026-11-28 (load average 3-4, same
options), img/s feedline / DALI and ratio, then CPU us per image and ratio::

    clahe   224   1368 /  940  1.45x   484 /  813  1.68x    1424 /  862  1.65x   470 /  802  1.71x
    clahe  full    426 /  238  1.79x  1548 / 2683  1.73x     421 /  251  1.68x  1613 / 2701  1.67x

With ``FEEDLINE_NATIVE=0`` (OpenCV's calls, as before) the same run gave 0.82x / 1.02x img/s and
1.02x / 0.96x CPU time.

``warp_perspective``'s kernel (uint8 of 1 or 3 channels, linear) gives OpenCV 5's
``warpPerspective`` pixels bit for bit, each pixel's taps loaded a row pair at a time and 32
pixels mapped and blended together, instead of OpenCV's byte-by-byte tap buffer. Measured
2026-11-28 (``--rounds 2 --seconds 2``, 2 threads, batch 32, the 100 photos, DALI 2.4 CPU) at a
load average of 3.6-4.6 (other jobs on the 2 cores; img/s follow the load, CPU time far less),
three runs, img/s feedline / DALI and ratio, then CPU us per image and the CPU ratio::

    224x224    3861 / 2239  1.72x    268 / 444   1.66x
               3876 / 2544  1.52x    260 / 430   1.65x
               4230 / 2570  1.65x    236 / 387   1.64x
    full size   992 /  590  1.68x   1004 / 1677  1.67x
               1138 /  625  1.82x    933 / 1583  1.70x
               1159 /  663  1.75x    859 / 1495  1.74x

Alternating single configurations at load 3.8-4.3 (compiled kernel / ``FEEDLINE_NATIVE=0``,
which calls ``warpPerspective`` as before / DALI), CPU us per image: 288-318 / 429-508 / 416-504
at 224x224, 1014-1075 / 1451-1563 / 1436-1816 at full size. The kernel alone (one thread, the
same photos and matrix): 0.59x of ``warpPerspective``'s CPU time at 224x224 (199 vs 334 us),
0.60x at full size (750 vs 1247 us); the rest of the ~1000 us per full-size image is the
pipeline's work around it.

Every row after those two kernels, in one run on a quieter machine (2026-11-28, load average
1-2, ``--rounds 2 --seconds 2 --data`` the 100 photos, 2 threads, batch 32, DALI 2.4 CPU);
img/s feedline / DALI and ratio, then the CPU-time ratio (DALI's over feedline's)::

    operator                      224x224                      full size
    laplacian                      3599 /   898  4.01x  4.75x   2105 /  291  7.23x  7.49x
    filter 3x3                    13928 / 11400  1.22x  1.34x   4680 / 3806  1.23x  1.30x
    filter 7x7                     4857 /  3750  1.30x  1.31x   1897 / 1038  1.83x  1.81x
    warp_perspective               5868 /  4476  1.31x  1.32x   2218 / 1247  1.78x  1.76x
    equalize                      11313 /  8630  1.31x  1.37x   4464 / 3028  1.47x  1.53x
    clahe                          4024 /  1984  2.03x  2.01x   1255 /  612  2.05x  2.04x
    water                          6406 /  2257  2.84x  2.85x   2087 /  678  3.08x  3.12x
    jpeg_compression_distortion    4809 /  2630  1.83x  1.10x   1656 /  836  1.98x  1.12x
    rand_augment ImageNet pipeline                               466 /  262  1.78x  1.95x

Usage: ``python benchmarks/image_operators.py [--ops laplacian rand_augment_imagenet]
[--sizes 224 full] [--threads 2] [--batch 32] [--rounds 2] [--seconds 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: operator → how to call it: ``call(fn, types, images, filters)``.
OPERATORS: dict[str, Callable[..., Any]] = {
    "laplacian": lambda fn, types, x, k: fn.laplacian(x, window_size=3),
    "filter_3x3": lambda fn, types, x, k: fn.experimental.filter(x, k[3]),
    "filter_7x7": lambda fn, types, x, k: fn.experimental.filter(x, k[7]),
    "warp_perspective": lambda fn, types, x, k: fn.experimental.warp_perspective(
        x, matrix=[1.05, 0.08, -6.0, 0.04, 0.97, 3.0, 1e-4, 2e-4, 1.0]
    ),
    "equalize": lambda fn, types, x, k: fn.equalize(x),
    "clahe": lambda fn, types, x, k: fn.clahe(x, tiles_x=8, tiles_y=8, clip_limit=2.0),
    "water": lambda fn, types, x, k: fn.water(x),
    "jpeg_compression_distortion": lambda fn, types, x, k: fn.jpeg_compression_distortion(
        x, quality=50
    ),
}
#: The ImageNet training pipeline with RandAugment, run on the encoded photos (size "full").
PIPELINES = ("rand_augment_imagenet",)
DEFAULT_DALI = Path("/work/dali-venv/bin/python")


def load_photos(folder: Path | None, count: int) -> list[np.ndarray]:
    """Up to ``count`` RGB photos from ``folder`` (or feedline's bundled samples)."""
    from PIL import Image

    if folder is None:
        from feedline import data

        folder = data.path("file_tree")
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    images = []
    for path in files[:count]:
        with Image.open(path) as image:
            images.append(np.asarray(image.convert("RGB")).copy())
    return images


def prepare(folder: Path | None, batch: int, out: Path) -> None:
    """Write the batches both frameworks read: ``224/*.npy`` and ``full/*.npy``."""
    from PIL import Image

    photos = load_photos(folder, batch)
    for size in ("224", "full"):
        (out / size).mkdir(parents=True, exist_ok=True)
    (out / "jpeg").mkdir(parents=True, exist_ok=True)
    for i, photo in enumerate(photos):
        np.save(out / "full" / f"{i:03}.npy", photo)
        Image.fromarray(photo).save(out / "jpeg" / f"{i:03}.jpg", quality=90)
        small = np.asarray(Image.fromarray(photo).resize((224, 224), Image.BILINEAR))
        np.save(out / "224" / f"{i:03}.npy", small)


def worker(framework: str, op: str, folder: Path, args: argparse.Namespace) -> dict[str, float]:
    """Time ``op`` in this process; returns ``{"img_s": ...}``."""
    if framework == "dali":
        from nvidia.dali import fn, pipeline_def, types
    else:
        from feedline import fn, pipeline_def, types
    if op in PIPELINES:
        pipe = _rand_augment_pipeline(framework, folder.parent / "jpeg", args)
        return _time(pipe, args)
    images = [np.load(p) for p in sorted(folder.glob("*.npy"))]
    batch = [images[i % len(images)] for i in range(args.batch)]
    size = 7 if op.endswith("7x7") else 3
    taps = [np.full((size, size), 1.0 / size**2, np.float32)] * args.batch

    @pipeline_def(batch_size=args.batch, num_threads=args.threads, device_id=None, seed=7)
    def graph() -> Any:
        x = fn.external_source(source=lambda: batch, batch=True, layout="HWC")
        k = {size: fn.external_source(source=lambda: taps, batch=True)} if "filter" in op else {}
        return OPERATORS[op](fn, types, x, k)

    return _time(graph(), args)


def _rand_augment_pipeline(framework: str, folder: Path, args: argparse.Namespace) -> Any:
    """decode -> random_resized_crop(224) -> rand_augment(n=2, m=9) -> crop_mirror_normalize,
    on the encoded photos of ``folder``."""
    if framework == "dali":
        from nvidia.dali import fn, pipeline_def, types
        from nvidia.dali.auto_aug import rand_augment
    else:
        from feedline import fn, pipeline_def, types
        from feedline.auto_aug import rand_augment
    files = sorted(folder.glob("*.jpg"))
    encoded = [np.fromfile(path, dtype=np.uint8) for path in files]
    batch = [encoded[i % len(encoded)] for i in range(args.batch)]

    @pipeline_def(
        batch_size=args.batch,
        num_threads=args.threads,
        device_id=None,
        seed=7,
        enable_conditionals=True,
    )
    def graph() -> Any:
        jpegs = fn.external_source(source=lambda: batch, batch=True)
        images = fn.decoders.image(jpegs, output_type=types.RGB)
        images = fn.random_resized_crop(images, size=[224, 224])
        images = rand_augment.rand_augment(images, n=2, m=9)
        return fn.crop_mirror_normalize(
            images,
            dtype=types.FLOAT,
            output_layout="CHW",
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            std=[0.229 * 255, 0.224 * 255, 0.225 * 255],
            mirror=fn.random.coin_flip(),
        )

    return graph()


def _time(pipe: Any, args: argparse.Namespace) -> dict[str, float]:
    """Images per second and CPU microseconds per image of ``pipe`` over ``args.seconds``."""
    pipe.build()
    for _ in range(2):
        pipe.run()
    count, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < args.seconds:
        pipe.run()
        count += args.batch
    rate = count / (time.perf_counter() - start)
    cpu_us = (time.process_time() - cpu) / count * 1e6
    if hasattr(pipe, "close"):
        pipe.close()
    return {"img_s": rate, "cpu_us": cpu_us}


def run_config(
    python: str, framework: str, op: str, folder: Path, args: argparse.Namespace
) -> dict[str, float] | None:
    """One configuration in a fresh process: ``{"img_s", "cpu_us"}``, or None when it failed
    (the error is printed)."""
    command = [python, __file__, "--worker", framework, "--op", op, "--folder", str(folder),
               "--threads", str(args.threads), "--batch", str(args.batch),
               "--seconds", str(args.seconds)]  # fmt: skip
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        print(f"  {framework} {op} failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    choices = [*OPERATORS, *PIPELINES]
    parser.add_argument("--ops", nargs="+", default=choices, choices=choices)
    parser.add_argument("--sizes", nargs="+", default=["224", "full"], choices=["224", "full"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--dali-python", default=os.environ.get("DALI_PYTHON"))
    parser.add_argument("--worker", choices=["feedline", "dali"], help=argparse.SUPPRESS)
    parser.add_argument("--op", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.op, args.folder, args)))
        return
    shared = os.environ.get("FEEDLINE_SHARED_DATA")
    data = args.data or (Path(shared) / "photos" if shared else None)
    dali = args.dali_python or (str(DEFAULT_DALI) if DEFAULT_DALI.exists() else None)
    with tempfile.TemporaryDirectory() as tmp:
        prepare(data, args.batch, Path(tmp))
        print(f"batch {args.batch}, {args.threads} threads, best of {args.rounds} rounds of "
              f"{args.seconds:g} s; DALI: {dali or 'not available'}")  # fmt: skip
        print(f"{'':34} {'img/s':>27}   {'CPU us per image':>27}")
        print(f"{'operator':28} {'size':>5} {'feedline':>9} {'DALI':>9} {'ratio':>7}   "
              f"{'feedline':>9} {'DALI':>9} {'ratio':>7}")  # fmt: skip
        for op in args.ops:
            for size in ["full"] if op in PIPELINES else args.sizes:
                print(_row(op, size, Path(tmp) / size, dali, args))


def _row(op: str, size: str, folder: Path, dali: str | None, args: argparse.Namespace) -> str:
    """Best img/s and least CPU time per image of each framework over the rounds."""
    rate: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for _ in range(args.rounds):
        runs = [("feedline", sys.executable)] + ([("dali", dali)] if dali else [])
        for framework, python in runs:
            result = run_config(python, framework, op, folder, args)
            if result is not None:
                rate[framework] = max(rate.get(framework, 0.0), result["img_s"])
                cpu[framework] = min(cpu.get(framework, float("inf")), result["cpu_us"])

    def ratio(ours: float | None, theirs: float | None) -> str:
        return f"{ours / theirs:6.2f}x" if ours and theirs else "      -"

    ours, theirs = rate.get("feedline"), rate.get("dali")
    ours_cpu, theirs_cpu = cpu.get("feedline"), cpu.get("dali")
    return (
        f"{op:28} {size:>5} {ours or 0:9.0f} {theirs or 0:9.0f} {ratio(ours, theirs)}   "
        f"{ours_cpu or 0:9.0f} {theirs_cpu or 0:9.0f} {ratio(theirs_cpu, ours_cpu)}"
    )


if __name__ == "__main__":
    main()
