"""Video clips for action recognition: videos → sequences of frames → PyTorch tensors.

``readers.video_resize`` cuts every video of a class-per-folder tree into clips of 8 frames
(every other frame), resizes them to 64 pixels on the shorter side and returns float frames in
[0, 1]; ``transpose`` makes them channel-first as 3-D convolutions expect. The iterator hands
out::

    {"clips": float32 [B, 3, 8, H, W], "labels": int32 [B, 1]}

By default a few synthetic videos (a square moving left or right: two classes) are written to
a temporary folder; ``--root DIR`` reads yours (``DIR/<class>/<video>``). Needs
``pip install 'feedline[video,torch]'``.

Usage: ``python examples/video_clips.py [--root DIR] [--batch-size 4] [--epochs 1]``
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from feedline import fn, pipeline_def, types
from feedline.plugins.pytorch import DALIGenericIterator, LastBatchPolicy

FRAMES = 8
STRIDE = 2
SHORTER = 64


def write_videos(root: Path, per_class: int = 3, seed: int = 0) -> Path:
    """Two classes of synthetic videos: a bright square moving left, or right."""
    import av

    rng = np.random.default_rng(seed)
    for label, direction in enumerate((-1, 1)):
        folder = root / ("left" if direction < 0 else "right")
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(per_class):
            count = int(rng.integers(20, 40))
            with av.open(str(folder / f"clip{n}.mp4"), mode="w") as container:
                stream = container.add_stream("mpeg4", rate=25)
                stream.height, stream.width, stream.pix_fmt = 96, 128, "yuv420p"
                for k in range(count):
                    image = np.full((96, 128, 3), 30 + 40 * label, np.uint8)
                    x = (64 + direction * 3 * k) % 112
                    image[40:56, x : x + 16] = 250
                    frame = av.VideoFrame.from_ndarray(image, format="rgb24")
                    for packet in stream.encode(frame):
                        container.mux(packet)
                for packet in stream.encode():
                    container.mux(packet)
    return root


@pipeline_def
def clip_pipeline(root: str) -> Any:
    """Channel-first float clips and their labels."""
    clips, labels = fn.readers.video_resize(
        file_root=root, sequence_length=FRAMES, stride=STRIDE, resize_shorter=SHORTER,
        dtype=types.FLOAT, normalized=True, random_shuffle=True, initial_fill=16,
        pad_last_batch=True, name="Reader",
    )  # fmt: skip
    return fn.transpose(clips, perm=[3, 0, 1, 2]), labels


def run(root: str, batch_size: int = 4, epochs: int = 1, num_threads: int = 2) -> list[dict]:
    """Iterate over the videos ``epochs`` times; return the PyTorch batches."""
    pipe = clip_pipeline(root, batch_size=batch_size, num_threads=num_threads, device_id=None,
                         seed=7)  # fmt: skip
    loader = DALIGenericIterator(pipe, ["clips", "labels"], reader_name="Reader",
                                 last_batch_policy=LastBatchPolicy.PARTIAL)  # fmt: skip
    batches = []
    for _ in range(epochs):
        batches += [batch for (batch,) in loader]
    return batches


def main(argv: list[str] | None = None) -> int:
    """Run the example and print one line per batch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="a folder of class folders of videos")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=1)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        root = options.root or str(write_videos(Path(folder)))
        for number, batch in enumerate(run(root, options.batch_size, options.epochs)):
            clips, labels = batch["clips"], batch["labels"]
            print(f"batch {number}: clips {tuple(clips.shape)} {clips.dtype}, "
                  f"labels {labels.flatten().tolist()}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
