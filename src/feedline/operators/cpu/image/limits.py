"""Limits that keep one hostile image from exhausting memory, checked from the header before
any pixel memory is allocated.

* :func:`check_image_size`: the operator's ``max_pixels`` (height × width);
* :func:`check_decoded_bytes`: the operator's ``max_decoded_bytes`` (height × width × channels ×
  bytes per channel of the decoded image);
* :func:`check_jpeg_entropy`: a JPEG whose file is too short to hold the entropy-coded data of
  the size its header declares (a "decompression bomb": a few hundred bytes that claim 169
  megapixels, which libjpeg would fill with grey after warning about the missing data). Every
  8×8 block of every component costs at least one Huffman code for its DC coefficient and one
  for its AC coefficients in a sequential scan, at least one code for its DC coefficient in a
  progressive file (whose first scans must carry every component's DC), and every sample of a
  lossless file at least one code; each code is at least as long as the shortest code of the
  file's table (1 bit at the very least). Arithmetic-coded files have no such floor: only the
  two limits above bound them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from feedline.operators.cpu.image.arg_schemas import MAX_DECODED_BYTES, MAX_IMAGE_PIXELS

__all__ = [
    "JpegLayout",
    "check_decoded_bytes",
    "check_image_size",
    "check_jpeg_entropy",
    "entropy_floor_bits",
    "jpeg_layout",
]

_SEQUENTIAL = frozenset((0xC0, 0xC1))
_PROGRESSIVE = 0xC2
_LOSSLESS = 0xC3
#: Start-of-frame markers: every 0xC0-0xCF but DHT (C4), JPG (C8) and DAC (CC).
_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def check_image_size(height: int, width: int, limit: int = MAX_IMAGE_PIXELS) -> None:
    """Refuse an image whose header claims more than ``limit`` pixels (the operator's
    ``max_pixels``, by default :data:`MAX_IMAGE_PIXELS`).

    Raises:
        ValueError: naming the claimed size, the limit and the argument that raises it.
    """
    if height * width > limit:
        raise ValueError(
            f"image of {width}x{height} = {height * width / 1e6:.1f} megapixels exceeds the "
            f"decoder's limit of {limit / 1e6:.1f} megapixels (max_pixels={limit}; raise "
            "max_pixels to decode it)"
        )


def check_decoded_bytes(
    height: int, width: int, channels: int, depth: int, limit: int = MAX_DECODED_BYTES
) -> None:
    """Refuse an image whose decoded pixels (``channels`` of ``depth`` bytes each) would take
    more than ``limit`` bytes (the operator's ``max_decoded_bytes``).

    Raises:
        ValueError: naming the declared size, the limit and the argument that raises it.
    """
    size = height * width * max(channels, 1) * depth
    if size > limit:
        raise ValueError(
            f"image of {width}x{height}x{channels} ({8 * depth}-bit) would take {size / 1e6:.1f} "
            f"MB decoded, more than the decoder's limit of {limit / 1e6:.1f} MB per image "
            f"(max_decoded_bytes={limit}; raise max_decoded_bytes to decode it)"
        )


@dataclass
class JpegLayout:
    """What a JPEG's markers up to its first scan say about its entropy-coded data.

    Attributes:
        process: the start-of-frame marker (0xC0 baseline … 0xCF).
        height: declared height.
        width: declared width.
        components: ``(id, horizontal, vertical)`` sampling factors of each component.
        dc_min: the shortest code length of each DC (or lossless) Huffman table, by id.
        ac_min: the shortest code length of each AC Huffman table, by id.
        first_scan: ``(component id, DC table, AC table)`` of the first scan's components.
    """

    process: int
    height: int
    width: int
    components: list[tuple[int, int, int]]
    dc_min: dict[int, int] = field(default_factory=dict)
    ac_min: dict[int, int] = field(default_factory=dict)
    first_scan: list[tuple[int, int, int]] = field(default_factory=list)


def _huffman_tables(segment: Any, dc_min: dict[int, int], ac_min: dict[int, int]) -> None:
    """Record the shortest code of each table of a DHT segment (its payload)."""
    pos = 0
    while pos + 17 <= len(segment):
        kind, table = segment[pos] >> 4, segment[pos] & 0x0F
        counts = segment[pos + 1 : pos + 17]
        shortest = next((n + 1 for n, count in enumerate(counts) if count), 16)
        (ac_min if kind else dc_min)[table] = shortest
        pos += 17 + sum(counts)


def _frame(marker: int, payload: Any) -> JpegLayout | None:
    """The layout a start-of-frame segment declares (None when it is cut short)."""
    if len(payload) < 6:
        return None
    comps = [
        (payload[6 + 3 * i], payload[7 + 3 * i] >> 4, payload[7 + 3 * i] & 0x0F)
        for i in range(payload[5])
        if 8 + 3 * i <= len(payload)
    ]
    height = (payload[1] << 8) | payload[2]
    width = (payload[3] << 8) | payload[4]
    return JpegLayout(marker, height, width, comps)


def jpeg_layout(data: Any) -> JpegLayout | None:
    """The :class:`JpegLayout` of a JPEG stream, or None when it has no usable frame header."""
    view = data if isinstance(data, bytes) else memoryview(data).cast("B")
    size, pos, layout = len(view), 2, None
    dc_min: dict[int, int] = {}
    ac_min: dict[int, int] = {}
    first_scan: list[tuple[int, int, int]] = []
    while pos + 4 <= size and view[pos] == 0xFF:
        marker = view[pos + 1]
        if marker == 0xFF:
            pos += 1
            continue
        if marker == 0xD9:
            break
        length = (view[pos + 2] << 8) | view[pos + 3]
        payload = view[pos + 4 : pos + 2 + length]
        if marker == 0xC4:
            _huffman_tables(payload, dc_min, ac_min)
        elif marker in _FRAME_MARKERS and layout is None:
            layout = _frame(marker, payload)
        elif marker == 0xDA:
            first_scan = [
                (payload[1 + 2 * i], payload[2 + 2 * i] >> 4, payload[2 + 2 * i] & 0x0F)
                for i in range(payload[0] if len(payload) else 0)
                if 3 + 2 * i <= len(payload)
            ]
            break
        pos += 2 + length
    if layout is not None:
        layout.dc_min, layout.ac_min, layout.first_scan = dc_min, ac_min, first_scan
    return layout


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def entropy_floor_bits(layout: JpegLayout) -> int:
    """The fewest bits of entropy-coded data that can describe the image ``layout`` declares
    (0 when the coding process has no such floor: arithmetic coding, hierarchical files)."""
    if not layout.components:
        return 0
    h_max = max(max(h for _, h, _ in layout.components), 1)
    v_max = max(max(v for _, _, v in layout.components), 1)
    if layout.process == _LOSSLESS:
        shortest = min(layout.dc_min.values(), default=1)
        return layout.height * layout.width * len(layout.components) * shortest
    if layout.process not in _SEQUENTIAL and layout.process != _PROGRESSIVE:
        return 0
    tables = {cid: (dc, ac) for cid, dc, ac in layout.first_scan}
    bits = 0
    for cid, h, v in layout.components:
        rows = _ceil_div(_ceil_div(layout.height * v, v_max), 8)
        cols = _ceil_div(_ceil_div(layout.width * h, h_max), 8)
        per_block = 1
        if layout.process in _SEQUENTIAL:
            per_block = 2
            if cid in tables:
                dc, ac = tables[cid]
                per_block = layout.dc_min.get(dc, 1) + layout.ac_min.get(ac, 1)
        bits += rows * cols * per_block
    return bits


def check_jpeg_entropy(data: Any, layout: JpegLayout | None = None) -> None:
    """Refuse a JPEG whose file is too short to hold the image its header declares (see the
    module's description); ``layout`` is :func:`jpeg_layout`'s, read here when not given.

    Raises:
        ValueError: naming the declared size and how many bytes it needs at the least.
    """
    layout = layout if layout is not None else jpeg_layout(data)
    if layout is None:
        return
    needed = _ceil_div(entropy_floor_bits(layout), 8)
    available = len(data) if isinstance(data, bytes) else memoryview(data).nbytes
    if needed > available:
        raise ValueError(
            f"JPEG declares {layout.width}x{layout.height} pixels ({len(layout.components)} "
            f"components), which takes at least {needed} bytes of compressed data, but the file "
            f"has only {available} bytes: refused as a truncated file or decompression bomb "
            "before decoding (no argument accepts it; max_pixels and max_decoded_bytes limit "
            "the images that are decoded)"
        )
