"""Test helpers for the geometry and colour operators: images and one-operator pipelines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from feedline import fn, pipeline_def
from feedline.core.plugins import PluginSystem
from tests.conftest import sample_data


def use_transforms(system: PluginSystem) -> None:
    """Register only the plugins these tests need (``basic`` and ``transforms``)."""
    from feedline.operators.cpu import basic, transforms_plugin

    system.register(basic, "basic")
    system.register(transforms_plugin, "transforms")


def real_images(folder: str = "file_tree", count: int = 3, max_side: int = 160) -> list[np.ndarray]:
    """RGB uint8 photos from the bundled sample data set ``folder`` (see ``feedline.data``).

    Images are shrunk (aspect kept) so that their longer side is at most ``max_side``.
    """
    root = sample_data(folder)
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    images = []
    for path in files[:count]:
        with Image.open(path) as img:
            rgb = img.convert("RGB")
            rgb.thumbnail((max_side, max_side))
            images.append(np.asarray(rgb).copy())
    return images


def generated_image(
    rng: np.random.Generator, height: int, width: int, channels: int = 3
) -> np.ndarray:
    """A uint8 HWC image with smooth gradients, edges and some noise."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    planes = []
    for c in range(channels):
        angle = rng.uniform(0, np.pi)
        wave = np.sin((x * np.cos(angle) + y * np.sin(angle)) / rng.uniform(2, 8) + c)
        plane = 127.5 + 100 * wave + rng.normal(0, 10, (height, width))
        plane[(x > width / 3) & (y < height / 2)] += 40
        planes.append(plane)
    return np.clip(np.stack(planes, axis=-1), 0, 255).astype(np.uint8)


@dataclass
class PerSample:
    """Wraps one value per sample: passed to the operator as a per-sample argument node."""

    values: Sequence[Any]


def run_op(
    op: str,
    samples: Sequence[np.ndarray],
    layout: str | None = "HWC",
    *extra_inputs: Sequence[np.ndarray],
    num_threads: int = 2,
    seed: int = 7,
    **kwargs: Any,
) -> tuple[list[np.ndarray], str]:
    """Run ``fn.<op>`` once on ``samples`` fed by an external source.

    ``extra_inputs`` become further positional inputs; :class:`PerSample` keyword values become
    per-sample argument inputs. Returns the output samples (copies) and the output layout.
    """
    batch = [np.ascontiguousarray(s) for s in samples]

    def feed(values: Sequence[Any]) -> Any:
        arrays = [np.asarray(v) for v in values]
        return fn.external_source(source=lambda: arrays, batch=True)

    @pipeline_def(batch_size=len(batch), num_threads=num_threads, device_id=None, seed=seed)
    def graph() -> Any:
        data = fn.external_source(source=lambda: batch, batch=True, layout=layout)
        others = [feed(values) for values in extra_inputs]
        args = {k: feed(v.values) if isinstance(v, PerSample) else v for k, v in kwargs.items()}
        target = fn
        for part in op.split("."):
            target = getattr(target, part)
        return target(data, *others, **args)

    pipe = graph()
    pipe.build()
    (out,) = pipe.run()
    return [out.at(i) for i in range(len(out))], out.layout()
