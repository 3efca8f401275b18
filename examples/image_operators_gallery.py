"""Render one photo through each image-processing operator, side by side, into one picture.

The picture (``docs/images/image_operators.jpg`` by default) shows the operators of the
``filters``, ``histogram``, ``warps`` and ``distortions`` families on a photo bundled with
feedline, one labelled tile each, so a reader sees what every operator does. All operators run
in one feedline pipeline on the CPU.

Usage: ``python examples/image_operators_gallery.py [--out PATH] [--tile 256] [--columns 5]``
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from feedline import data, fn, pipeline_def, types

_TILT = [1.0, 0.18, -40.0, 0.05, 1.0, -8.0, 0.0006, 0.0009, 1.0]


def _bayer(image: Any) -> Any:
    """A Bayer mosaic of an RGB image (for ``debayer``), made by a Python operator."""
    return fn.python_function(image, function=_mosaic, num_outputs=1)


def _mosaic(rgb: np.ndarray) -> np.ndarray:
    """Sensors in ``R G / G B`` rows from (0, 0). DALI, as OpenCV, names a pattern after the
    2x2 tile at (1, 1), here ``B G / G R``: BGGR, ``blue_position=(0, 0)``."""
    out = np.empty(rgb.shape[:2], rgb.dtype)
    out[0::2, 0::2] = rgb[0::2, 0::2, 0]
    out[0::2, 1::2] = rgb[0::2, 1::2, 1]
    out[1::2, 0::2] = rgb[1::2, 0::2, 1]
    out[1::2, 1::2] = rgb[1::2, 1::2, 2]
    return out


def _remap(image: Any, size: int) -> Any:
    """A fish-eye-like remap: the source radius grows with the square of the output radius."""
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) + np.float32(0.5)
    dx, dy = x - size / 2, y - size / 2
    r = np.sqrt(dx * dx + dy * dy) / (size / 2)
    mapx = (size / 2 + dx * (0.45 + 0.55 * r)).astype(np.float32)
    mapy = (size / 2 + dy * (0.45 + 0.55 * r)).astype(np.float32)
    mx = fn.external_source(source=lambda: [mapx], batch=True)
    my = fn.external_source(source=lambda: [mapy], batch=True)
    return fn.experimental.remap(image, mx, my)


def operations(size: int) -> list[tuple[str, Callable[[Any], Any]]]:
    """(label, call) for each operator shown, in display order."""
    sharpen = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
    emboss = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]], np.float32)

    def taps(kernel: np.ndarray) -> Any:
        return fn.external_source(source=lambda: [kernel], batch=True)

    return [
        ("input", lambda x: x),
        (
            "laplacian",
            lambda x: (
                fn.laplacian(x, window_size=5, normalized_kernel=True, dtype=types.FLOAT) * 4.0
                + 128.0
            ),
        ),
        ("filter (sharpen)", lambda x: fn.filter(x, taps(sharpen))),
        ("filter (emboss)", lambda x: fn.filter(x, taps(emboss), border="clamp")),
        ("median_blur 9x9", lambda x: fn.experimental.median_blur(x, window_size=9)),
        ("erode 7x7", lambda x: fn.experimental.erode(x, mask_size=7)),
        ("dilate 7x7", lambda x: fn.experimental.dilate(x, mask_size=7)),
        ("equalize", fn.equalize),
        ("clahe", lambda x: fn.clahe(x, tiles_x=4, tiles_y=4, clip_limit=3.0, luma_only=False)),
        ("debayer (mosaic)", lambda x: _bayer(x)),
        ("debayer", lambda x: fn.debayer(_bayer(x), blue_position=[0, 0])),
        ("warp_perspective", lambda x: fn.experimental.warp_perspective(x, matrix=_TILT)),
        ("remap", lambda x: _remap(x, size)),
        ("water", lambda x: fn.water(x, ampl_x=6.0, ampl_y=6.0, interp_type=types.INTERP_LINEAR)),
        ("sphere", lambda x: fn.sphere(x, interp_type=types.INTERP_LINEAR)),
        ("jpeg_compression (q=5)", lambda x: fn.jpeg_compression_distortion(x, quality=5)),
        ("noise.shot", lambda x: fn.noise.shot(x, factor=25.0)),
        ("noise.salt_and_pepper", lambda x: fn.noise.salt_and_pepper(x, prob=0.08)),
        ("noise.gaussian", lambda x: fn.noise.gaussian(x, stddev=25.0)),
    ]


def render(photo: np.ndarray, size: int) -> list[tuple[str, np.ndarray]]:
    """Each operator's output for ``photo`` (square, ``size`` pixels), as uint8 images."""
    ops = operations(size)

    @pipeline_def(batch_size=1, num_threads=2, device_id=None, seed=2028)
    def gallery() -> Any:
        image = fn.external_source(source=lambda: [photo], batch=True, layout="HWC")
        return tuple(call(image) for _, call in ops)

    pipe = gallery()
    pipe.build()
    outputs = pipe.run()
    pipe.close()
    tiles = []
    for (label, _), batch in zip(ops, outputs, strict=True):
        tile = np.asarray(batch.at(0))
        tile = np.clip(tile, 0, 255).astype(np.uint8)
        if tile.ndim == 2 or tile.shape[-1] == 1:
            tile = np.repeat(tile.reshape(tile.shape[:2])[:, :, None], 3, axis=2)
        tiles.append((label, tile))
    return tiles


def compose(tiles: list[tuple[str, np.ndarray]], columns: int, size: int) -> Image.Image:
    """A labelled grid of the tiles."""
    label_height = 22
    rows = -(-len(tiles) // columns)
    sheet = Image.new("RGB", (columns * size, rows * (size + label_height)), "white")
    draw = ImageDraw.Draw(sheet)
    for i, (label, tile) in enumerate(tiles):
        x, y = (i % columns) * size, (i // columns) * (size + label_height)
        sheet.paste(Image.fromarray(tile).resize((size, size)), (x, y + label_height))
        draw.text((x + 6, y + 5), label, fill="black")
    return sheet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images/image_operators.jpg"))
    parser.add_argument("--tile", type=int, default=256)
    parser.add_argument("--columns", type=int, default=5)
    args = parser.parse_args()
    source = sorted(data.path("file_tree").rglob("*.jpg"))[0]
    with Image.open(source) as image:
        rgb = image.convert("RGB")
        side = min(rgb.size)
        left, top = (rgb.width - side) // 2, (rgb.height - side) // 2
        square = rgb.crop((left, top, left + side, top + side)).resize((args.tile, args.tile))
    tiles = render(np.asarray(square).copy(), args.tile)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    compose(tiles, args.columns, args.tile).save(args.out, quality=80)


if __name__ == "__main__":
    main()
