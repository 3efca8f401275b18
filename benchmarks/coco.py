"""Build time, peak memory and throughput of ``readers.coco``, beside DALI's when importable.

Generates (once, cached in ``--data-dir``) a COCO-shaped annotation file — by default 50,000
images and 400,000 annotations, polygons of about 24 points, 1% crowd objects with uncompressed
RLE, about 220 MB — and 50,000 image files (hard links to one 640x480 JPEG of ~130 kB, the
size of a COCO photo). Then, each in a fresh
process so that peak memory (``ru_maxrss``) is the configuration's own:

* build: cold (parsing the JSON) and warm (from feedline's annotation cache), with and without
  ``polygon_masks``;
* reader-only throughput over one epoch (``images, bboxes, labels``).

Times are wall clock and process CPU time (user + system, all threads: steadier than wall time
on a loaded machine). ``--repeat N`` measures each task N times, alternating the frameworks.

DALI's rows run in this interpreter when it imports ``nvidia.dali``, else in the one
``--dali-python`` names (a virtual environment with DALI and NumPy, e.g. ``.../bin/python``).
``--fallback`` adds a feedline row with ``FEEDLINE_NATIVE=0``: what a machine without a C
compiler, or one where the compiled parser's exact paths are off, gets (the segmentations are
then parsed by simdjson alone, the structure read by NumPy). On 2026-11-28 (2-core AMD EPYC VM
under a load average of 11-17, so wall times swing by 2x; CPU seconds are steadier),
``--tasks cold_poly --fallback --repeat 5`` gave, as CPU seconds beside DALI 2.4 CPU's
1.80-2.40: feedline 1.19-1.35 (0.50-0.75x DALI's), native=0 1.51-1.74 (0.72-0.94x, wall time
0.83-0.86x). The same run with the fallback as it was before it read the structure with NumPy
(one ``len`` per polygon through simdjson's objects), back to back: native=0 1.62-1.84, 0.88-1.01x
DALI's CPU time (wall 0.74-2.04x). Over 21 rounds that day the new fallback took 0.72-1.12x
DALI's CPU time (median 0.82); in the two rounds above 1 it took 0.6 s more than the compiled
parser's row, against 0.2-0.4 s in the others, so the machine's load is the likely cause, but
on so loaded a machine it is not at most DALI's time in every round. With 1 MB blocks for
simdjson (instead of 4 MB), the fallback's peak memory is 458 MB instead of 490 (DALI's 463),
and five more rounds gave native=0 1.45-1.74 CPU seconds, 0.75-0.93x DALI's (wall 0.75-0.95x).
On the same VM later that day at a load average under 1 (the other jobs done), five rounds of
``--tasks cold_poly --fallback --repeat 5`` gave native=0 1.41-1.53 s against DALI's 1.58-1.77 s
(0.83-0.97x DALI's time in every round) and feedline 1.05-1.51 s (0.62-0.95x).
Earlier, without masks,
feedline took 0.71-0.75 CPU seconds (native=0 0.67-0.79) against DALI's 1.17-1.40. Where the
compiled parser cannot convert a number it skips that segmentation and simdjson parses all
skipped ones of a block at once (before, one simdjson call per segmentation made a machine whose
compiled path was off 5x slower than the fallback alone).

Usage: ``python benchmarks/coco.py [--images 50000] [--annotations 400000] [--threads N]
[--batch-size 256] [--data-dir DIR] [--no-dali] [--dali-python PATH] [--fallback]
[--tasks cold,cold_poly,...] [--repeat N]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

_CATEGORIES = [c for c in range(1, 91) if c not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]


def _dumps(value: Any) -> bytes:
    """JSON with ``json.dump``'s default separators (``", "``, ``": "``), as COCO files have."""
    try:
        import orjson
    except ImportError:
        return json.dumps(value).encode()
    # orjson writes no spaces; the generated strings hold no ',' and no '":', so this is exact.
    return orjson.dumps(value).replace(b",", b", ").replace(b'":', b'": ')


def _annotations(rng: np.random.Generator, first: int, count: int, images: dict[str, np.ndarray],
                 crowd_rate: float) -> list[dict[str, Any]]:  # fmt: skip
    n_images = images["id"].size
    which = rng.integers(0, n_images, count)
    widths, heights = images["width"][which], images["height"][which]
    x, y = rng.random(count) * widths * 0.6, rng.random(count) * heights * 0.6
    w = rng.random(count) * (widths - x) + 1
    h = rng.random(count) * (heights - y) + 1
    crowd = rng.random(count) < crowd_rate
    points = rng.integers(16, 33, count)
    out = []
    for k in range(count):
        if crowd[k]:
            size = int(heights[k]) * int(widths[k])
            runs = rng.integers(1, 60, 120)
            runs[-1] = size - int(runs[:-1].sum())
            seg: Any = {"counts": runs.tolist(), "size": [int(heights[k]), int(widths[k])]}
        else:
            shape = rng.random((points[k], 2)) * [w[k], h[k]] + [x[k], y[k]]
            seg = [np.round(shape, 2).ravel().tolist()]
        out.append({
            "segmentation": seg, "area": round(float(w[k] * h[k]), 4), "iscrowd": int(crowd[k]),
            "image_id": int(images["id"][which[k]]),
            "bbox": [round(float(v), 2) for v in (x[k], y[k], w[k], h[k])],
            "category_id": int(rng.choice(_CATEGORIES)), "id": first + k,
        })  # fmt: skip
    return out


def generate(path: Path, n_images: int, n_annotations: int, seed: int = 0) -> None:
    """Write a COCO-shaped annotation file (streamed, chunk by chunk)."""
    rng = np.random.default_rng(seed)
    images = {
        "id": rng.permutation(np.arange(1, 3 * n_images, 3))[:n_images],
        "width": rng.integers(320, 641, n_images),
        "height": rng.integers(240, 481, n_images),
    }
    entries = [
        {"license": 1 + i % 7, "file_name": f"{int(iid):012d}.jpg",
         "coco_url": f"http://images.cocodataset.org/train2017/{int(iid):012d}.jpg",
         "height": int(h), "width": int(w), "date_captured": "2013-11-14 16:28:13",
         "flickr_url": f"http://farm4.staticflickr.com/3153/{int(iid)}_e4a3d9e8a2_z.jpg",
         "id": int(iid)}
        for i, (iid, w, h) in enumerate(zip(images["id"], images["width"], images["height"],
                                            strict=True))
    ]  # fmt: skip
    categories = [{"supercategory": "thing", "id": c, "name": f"class{c}"} for c in _CATEGORIES]
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(b'{"info": {"description": "feedline benchmark"}, "licenses": [], "images": ')
        f.write(_dumps(entries))
        f.write(b', "annotations": [')
        chunk = 20_000
        for first in range(0, n_annotations, chunk):
            count = min(chunk, n_annotations - first)
            text = _dumps(_annotations(rng, first, count, images, 0.01))
            f.write((b", " if first else b"") + text[1:-1])
        f.write(b'], "categories": ' + _dumps(categories) + b"}")
    tmp.replace(path)


def ensure_dataset(folder: Path, n_images: int, n_annotations: int) -> Path:
    """The annotation file (generated on first use) and its images (hard links)."""
    folder.mkdir(parents=True, exist_ok=True)
    ann = folder / f"instances_{n_images}_{n_annotations}.json"
    if not ann.exists():
        print(f"generating {ann} ...", flush=True)
        generate(ann, n_images, n_annotations)
    images = _images_dir(ann)
    images.mkdir(exist_ok=True)
    names = [e["file_name"] for e in json.loads(_images_part(ann))]
    missing = [n for n in names if not (images / n).exists()]
    if missing:
        from PIL import Image

        model = ann.with_name(f"{ann.stem}_model.jpg")  # one per set: links per file are capped
        noise = np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)
        Image.fromarray(noise).save(model, quality=50)  # about the size of a COCO photo
        for name in missing:
            os.link(model, images / name)
    return ann


def _images_dir(ann: Path) -> Path:
    """The folder of ``ann``'s images. Each data set has a folder holding its own images only,
    as a real one does: feedline's reader lists the folder to check that every image exists,
    which costs per entry (29 ms for 55,000 entries, against 3 ms for the 5,000 images of a
    val-sized set)."""
    return ann.with_name(f"{ann.stem}_images")


def _images_part(ann: Path) -> bytes:
    data = ann.read_bytes()
    start = data.index(b'"images": ') + len(b'"images": ')
    return data[start : data.index(b', "annotations": [')]


# -- children: one measurement each, in a fresh process --------------------------------------


def _peak_mb() -> float:
    """Peak resident memory of this process in MB (``VmHWM``: unlike ``ru_maxrss`` it does not
    include the parent's memory at fork time)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _feedline_pipe(args: argparse.Namespace, **kw: Any) -> Any:
    import feedline.readers.coco as coco_plugin
    from feedline import fn, pipeline_def
    from feedline.core.plugins import PluginSystem, use_plugin_system

    system = PluginSystem(autoload=False)
    system.register(coco_plugin, "coco-reader")
    with use_plugin_system(system):

        @pipeline_def(batch_size=args.batch_size, num_threads=args.threads, device_id=None)
        def pipe() -> Any:
            return tuple(fn.readers.coco(name="Reader", **kw))

        p = pipe()
        start = time.perf_counter()
        p.build()
        return p, time.perf_counter() - start


def _dali_pipe(args: argparse.Namespace, **kw: Any) -> Any:
    from nvidia.dali import fn, pipeline_def

    kw.pop("cache_dir", None)

    @pipeline_def(batch_size=args.batch_size, num_threads=args.threads, device_id=None)
    def pipe() -> Any:
        return tuple(fn.readers.coco(name="Reader", **kw))

    p = pipe()
    start = time.perf_counter()
    p.build()
    return p, time.perf_counter() - start


def child(args: argparse.Namespace) -> None:
    """Run one measurement and print it as JSON."""
    framework, task = args.child
    ann = Path(args.annotations_file)
    kw: dict[str, Any] = {"file_root": str(_images_dir(ann)), "annotations_file": str(ann)}
    make = _dali_pipe if framework == "dali" else _feedline_pipe
    if framework == "dali":
        import nvidia.dali.fn  # noqa: F401  (import cost is not build time)
    else:
        import feedline.readers.coco.parse  # noqa: F401
    kw["cache_dir"] = str(ann.parent / "cache") if task in ("warm", "warm_poly", "run") else ""
    if task.endswith("poly"):
        kw["polygon_masks"] = True
    baseline = _peak_mb()
    cpu = time.process_time()
    pipe, build = make(args, **kw)
    result: dict[str, Any] = {"build_s": build, "cpu_s": time.process_time() - cpu,
                              "peak_mb": _peak_mb(), "baseline_mb": baseline}  # fmt: skip
    if task == "run":
        n = pipe.epoch_size("Reader")
        batches = -(-n // args.batch_size)
        pipe.run()  # warm-up (threads, first batch)
        start = time.perf_counter()
        for _ in range(batches):
            pipe.run()
        result["samples_per_s"] = batches * args.batch_size / (time.perf_counter() - start)
    print(json.dumps(result))


#: The rows a run may print: framework, its child's name, extra environment.
_ROWS = {
    "feedline": ("feedline", {}),
    "fallback": ("feedline", {"FEEDLINE_NATIVE": "0"}),
    "dali": ("dali", {}),
}
_LABELS = {"feedline": "feedline", "fallback": "native=0", "dali": "dali"}


def _measure(args: argparse.Namespace, row: str, task: str) -> dict[str, Any] | None:
    framework, extra = _ROWS[row]
    python = args.dali_python if framework == "dali" and args.dali_python else sys.executable
    command = [python, __file__, "--child", framework, task,
               "--annotations-file", str(args.annotations_file),
               "--threads", str(args.threads), "--batch-size", str(args.batch_size)]  # fmt: skip
    env = {**os.environ, "PYTHONWARNINGS": "ignore", **extra}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode:
        print(f"  {row} {task} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=50_000)
    parser.add_argument("--annotations", type=int, default=400_000)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "feedline-coco"))
    parser.add_argument("--no-dali", action="store_true", help="skip the DALI measurements")
    parser.add_argument("--dali-python", help="an interpreter that imports nvidia.dali")
    parser.add_argument(
        "--fallback", action="store_true", help="also measure feedline with FEEDLINE_NATIVE=0"
    )
    parser.add_argument(
        "--tasks",
        default="cold,cold_poly,warm,warm_poly,run",
        help="comma-separated subset of the measurements, in this order",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure each task this many times, alternating the frameworks",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--annotations-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    args.annotations_file = ensure_dataset(Path(args.data_dir), args.images, args.annotations)
    size = args.annotations_file.stat().st_size / 1e6
    print(f"{args.annotations_file} ({size:.0f} MB, {args.images} images, {args.annotations} "
          f"annotations), {args.threads} threads, batch {args.batch_size}")  # fmt: skip
    frameworks = ["feedline", *(["fallback"] if args.fallback else [])]
    if not args.no_dali:
        if _dali_importable(args.dali_python):
            frameworks.append("dali")
        else:
            print("nvidia.dali is not importable: no DALI figures")
    _measure(args, "feedline", "warm")  # fill the cache (not timed)
    _measure(args, "feedline", "warm_poly")
    tasks = [("cold", "build, cold"), ("cold_poly", "build, cold, polygon_masks"),
             ("warm", "build, warm (cache)"), ("warm_poly", "build, warm, polygon_masks"),
             ("run", "epoch, reader only")]  # fmt: skip
    print(f"{'measurement':30s} {'framework':9s} {'time s':>8s} {'cpu s':>6s} {'peak MB':>8s} "
          f"{'samples/s':>10s}  feedline / DALI")  # fmt: skip
    wanted = args.tasks.split(",")
    for task, label in [t for t in tasks if t[0] in wanted for _ in range(args.repeat)]:
        results: dict[str, dict[str, Any]] = {}
        for framework in frameworks:
            if framework == "dali" and task.startswith("warm"):
                continue
            r = _measure(args, framework, task)
            if r is None:
                continue
            results[framework] = r
            rate = f"{r['samples_per_s']:10.0f}" if "samples_per_s" in r else f"{'':10s}"
            print(f"{label:30s} {_LABELS[framework]:9s} {r['build_s']:8.2f} {r['cpu_s']:6.2f} "
                  f"{r['peak_mb']:8.0f} {rate}{_ratio(task, results)}", flush=True)  # fmt: skip


def _dali_importable(python: str | None) -> bool:
    """Whether this interpreter (or ``python``) imports ``nvidia.dali``."""
    command = [python or sys.executable, "-c", "import nvidia.dali"]
    return subprocess.run(command, capture_output=True).returncode == 0


def _ratio(task: str, results: dict[str, dict[str, Any]]) -> str:
    """feedline's figures (each row's) over DALI's, once DALI's are measured."""
    if "dali" not in results:
        return ""
    return "  " + "; ".join(
        f"{_LABELS[row]} {_ratio_of(task, results[row], results['dali'])}"
        for row in ("feedline", "fallback")
        if row in results
    )


def _ratio_of(task: str, mine: dict[str, Any], dali: dict[str, Any]) -> str:
    """One row's figures over DALI's."""
    if task == "run":
        return f"throughput x{mine['samples_per_s'] / dali['samples_per_s']:.2f}"
    return (f"time x{mine['build_s'] / dali['build_s']:.2f}, "
            f"cpu x{mine['cpu_s'] / dali['cpu_s']:.2f}, "
            f"memory x{mine['peak_mb'] / dali['peak_mb']:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
