"""Decode fusion: a graph pass that merges ``decoders.image`` with the geometry that follows it.

The fused operators' kernels are in :mod:`~feedline.operators.cpu.image.fused_kernels`.

At ``Pipeline.build()`` the pass rewrites, on the CPU:

* ``decoders.image → crop`` into ``decoders.image_crop`` (the codec decodes only the window when
  it can), when the crop keeps the default ``dtype``/``out_of_bounds_policy``/``fill_values``;
* ``decoders.image → random_resized_crop`` into the hidden ``decoders._image_random_resized_crop``
  and ``decoders.image → resize`` into the hidden ``decoders._image_resize``: the size comes from
  the header, and a JPEG is decoded (only the rows and columns the filter reads) and resampled
  in one compiled call; without the region decoder it is decoded whole and the compiled
  resampler (or Pillow) reads the window in place;
* ``decoders.image_random_crop → resize`` into the hidden ``decoders._image_random_crop_resize``
  and ``decoders.image_crop → resize`` into ``decoders._image_crop_resize`` (DALI's fused
  spellings): the window is placed from the header's size exactly as the decoder places it (with
  the decoder's seed), and the compiled call resamples it with its edges clamped to the window,
  as if only the window had been decoded;
* a fixed crop of a ``crop_mirror_normalize`` that follows such a fused resize is moved into the
  resize, which then computes only the pixels inside the window (``resize(resize_shorter=256)
  → crop_mirror_normalize(crop=224)`` resamples 224 x 224 pixels, not 256 x 341);
* a ``crop_mirror_normalize`` left without a crop after any of these fused operators is folded
  into it: a JPEG is then decoded, resampled and normalised in one compiled call (the slowest
  step of the standard ImageNet pipelines runs without the GIL, and without a trip through the
  executor per sample).

Each rewritten operator must be the only reader of the output it takes over. The fused node keeps
the follower's name, and the seed and position of the operator that draws the window (the
follower, or the window decoder), so it draws the same random windows and produces the same
pixels and values; only a moved crop can differ from the unfused graph, by 1 level where a
value falls on .5 (by Pillow's rounding without the compiled resampler; both are within 1 of the
exact resize).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from feedline.core.graph import DataNode, OpNode
from feedline.core.types import DataType
from feedline.operators.cpu.image.arg_schemas import NORMALIZE_ARGS
from feedline.operators.cpu.image.cmn import has_crop
from feedline.operators.cpu.image.schemas import SLICE_WINDOW_ARGS
from feedline.operators.cpu.tensor.slice import slice_axes

__all__ = [
    "FUSED_CROP_RESIZE",
    "FUSED_RANDOM_CROP_RESIZE",
    "FUSED_RESIZE",
    "FUSED_RRC",
    "FUSED_SLICE_RESIZE",
    "fuse_decoders",
]

FUSED_RRC = "decoders._image_random_resized_crop"
FUSED_RESIZE = "decoders._image_resize"
FUSED_RANDOM_CROP_RESIZE = "decoders._image_random_crop_resize"
FUSED_CROP_RESIZE = "decoders._image_crop_resize"
FUSED_SLICE_RESIZE = "decoders._image_slice_resize"
_DECODE_ARGS = (
    "output_type",
    "dtype",
    "max_pixels",
    "max_decoded_bytes",
    "adjust_orientation",
    "use_fast_idct",
)
_RANDOM_WINDOW_ARGS = ("random_area", "random_aspect_ratio", "num_attempts")
_CROP_ARGS = ("crop", "crop_h", "crop_w", "crop_pos_x", "crop_pos_y", "rounding")
_SLICE_ARGS = tuple(a.name for a in SLICE_WINDOW_ARGS)
#: Window decoders fused with a following resize: the fused operator, the window's arguments.
_WINDOW_DECODERS = {
    "decoders.image_random_crop": (FUSED_RANDOM_CROP_RESIZE, _RANDOM_WINDOW_ARGS),
    "decoders.image_crop": (FUSED_CROP_RESIZE, _CROP_ARGS),
    "decoders.image_slice": (FUSED_SLICE_RESIZE, _SLICE_ARGS),
}
_NO_CROP = {"crop": None, "crop_h": None, "crop_w": None, "crop_pos_x": 0.5, "crop_pos_y": 0.5}


def _sole_reader(
    ops: Sequence[OpNode], node: DataNode, outputs: Sequence[DataNode]
) -> OpNode | None:
    """The only operator reading ``node`` (as its only input), or None."""
    readers = [op for op in ops if any(n is node for n in op.upstream())]
    if len(readers) != 1 or any(out is node for out in outputs):
        return None
    (reader,) = readers
    if (
        reader.device != "cpu"
        or len(reader.inputs) != 1
        or reader.inputs[0] is not node
        or any(value is node for value in reader.arg_inputs.values())
    ):
        return None
    return reader


def _crop_fusable(op: OpNode) -> bool:
    args = op.args
    return (
        args.get("dtype") in (None, DataType.UINT8)
        and args.get("out_of_bounds_policy") == "error"
        and args.get("fill_values") in (None, (0.0,))
        and args.get("crop_d") is None
        and "crop_pos_z" not in op.arg_inputs
    )


def _uses_depth(decoder: OpNode) -> bool:
    """Whether ``decoders.image_crop`` is given ``crop_d`` or a per-sample ``crop_pos_z`` (no
    effect on images, but checked by its own kernel, which fusion would replace)."""
    return decoder.args.get("crop_d") is not None or any(
        k in decoder.arg_inputs for k in ("crop_d", "crop_pos_z")
    )


def _slice_fusable(decoder: OpNode) -> bool:
    """Whether every window of a ``decoders.image_slice`` is a region of the image or an error:
    no padding (``out_of_bounds_policy`` ``error`` or ``trim_to_shape``), no channel slicing."""
    if decoder.args["out_of_bounds_policy"] not in ("error", "trim_to_shape"):
        return False
    try:
        return 2 not in slice_axes("HWC", 3, decoder.args)
    except ValueError:  # the unfused operator reports it
        return False


def _merge(decoder: OpNode, follower: OpNode, schema: Any, args: Mapping[str, Any]) -> None:
    """Turn ``follower`` into the fused operator reading the decoder's input."""
    merged = {**args, **{k: decoder.args[k] for k in _DECODE_ARGS}}
    follower.schema = schema
    follower.args = {spec.name: merged.get(spec.name, spec.default) for spec in schema.args}
    follower.inputs = list(decoder.inputs)
    follower.arg_inputs = {**decoder.arg_inputs, **follower.arg_inputs}
    # A fused node fails mostly on the file it decodes: report and treat that as the decoder's.
    follower.error_name = decoder.error_name or decoder.name
    if decoder.on_error is not None:
        follower.on_error = decoder.on_error


def _push_crop(ops: Sequence[OpNode], resize: OpNode, outputs: Sequence[DataNode]) -> None:
    """Move a fixed crop of the ``crop_mirror_normalize`` after ``resize`` into the resize."""
    cmn = _sole_reader(ops, resize.outputs[0], outputs)
    if cmn is None or cmn.schema.name != "crop_mirror_normalize":
        return
    args = cmn.args
    if any(k in cmn.arg_inputs for k in (*_CROP_ARGS, "crop_d", "crop_pos_z")):
        return
    if args["out_of_bounds_policy"] != "error" or args.get("crop_d") is not None:
        return
    if not has_crop(args):
        return
    resize.args = {**resize.args, **{k: args[k] for k in _CROP_ARGS}}
    cmn.args = {**args, **_NO_CROP}


def _absorb_normalize(
    ops: Sequence[OpNode], fused: OpNode, outputs: Sequence[DataNode]
) -> OpNode | None:
    """Fold the ``crop_mirror_normalize`` without a crop that reads ``fused`` into it; returns the
    folded operator (None if there is none)."""
    cmn = _sole_reader(ops, fused.outputs[0], outputs)
    if cmn is None or cmn.schema.name != "crop_mirror_normalize":
        return None
    if has_crop(cmn.args):
        return None
    if any(k not in NORMALIZE_ARGS for k in cmn.arg_inputs):
        return None
    absorbed = {k: cmn.args[k] for k in NORMALIZE_ARGS if k in cmn.args}
    fused.args = {**fused.args, **absorbed, "normalize": True, "normalize_dtype": cmn.args["dtype"]}
    fused.arg_inputs = {**fused.arg_inputs, **cmn.arg_inputs}
    fused.outputs = cmn.outputs
    for node in fused.outputs:
        node.source = fused
    return cmn


def _fold_normalize(result: list[OpNode], fused: OpNode, outputs: Sequence[DataNode]) -> None:
    """Fold a following crop-less ``crop_mirror_normalize`` into ``fused`` and run the fused
    operator where the folded one ran: after the nodes it reads (e.g. a coin_flip for mirror),
    before those that read it."""
    folded = _absorb_normalize(result, fused, outputs)
    if folded is not None:
        result.remove(fused)
        result[result.index(folded)] = fused


def fuse_decoders(ops: Sequence[OpNode], outputs: Sequence[DataNode]) -> list[OpNode]:
    """The graph pass: returns ``ops`` with fusable decoder/geometry pairs merged."""
    from feedline.core.plugins import get_registry

    registry = get_registry()
    result = list(ops)
    for decoder in list(result):
        fusable = ("decoders.image", *_WINDOW_DECODERS)
        if decoder.schema.name not in fusable or decoder.device != "cpu":
            continue
        if decoder.args.get("dtype") != DataType.UINT8 and decoder.schema.name != "decoders.image":
            continue
        follower = _sole_reader(result, decoder.outputs[0], outputs)
        if follower is None:
            continue
        name = follower.schema.name
        if decoder.schema.name in _WINDOW_DECODERS:
            if name != "resize" or follower.args.get("dtype") not in (None, DataType.UINT8):
                continue
            if follower.args.get("save_attrs"):
                continue
            if decoder.schema.name == "decoders.image_slice" and not _slice_fusable(decoder):
                continue
            if decoder.schema.name == "decoders.image_crop" and _uses_depth(decoder):
                continue
            fused, window_args = _WINDOW_DECODERS[decoder.schema.name]
            window = {k: decoder.args[k] for k in window_args if k in decoder.args}
            _merge(decoder, follower, registry.operators[fused].schema, {**follower.args, **window})
            # The window is the decoder's draw: the fused node takes its seed and position.
            follower.seed, follower.position = decoder.seed, decoder.position
            _fold_normalize(result, follower, outputs)
        elif name == "crop" and _crop_fusable(follower):
            schema = registry.operators["decoders.image_crop"].schema
            _merge(decoder, follower, schema, {k: follower.args.get(k) for k in _CROP_ARGS})
        elif (
            name in ("random_resized_crop", "resize")
            and decoder.args.get("dtype") == DataType.UINT8
            and follower.args.get("dtype") in (None, DataType.UINT8)
            and not follower.args.get("save_attrs")
        ):
            fused = FUSED_RRC if name == "random_resized_crop" else FUSED_RESIZE
            _merge(decoder, follower, registry.operators[fused].schema, follower.args)
            if name == "resize":
                _push_crop(result, follower, outputs)
            _fold_normalize(result, follower, outputs)
        else:
            continue
        result.remove(decoder)
    return result
