"""Element types of graph nodes, known while the graph is defined (before any batch runs).

A structured pipeline checks every ``DataNode`` assigned to a typed field against the field's
declared type. :func:`node_dtype` follows the node to the operator that made it: an explicit
``dtype`` argument, operators whose output type is fixed (decoders, random draws, shapes),
operators that keep their input's type (geometry, colour, padding, copies), constants, and the
arithmetic cases where the promotion rules leave no doubt. The structured pipeline's external
source declares the blueprint's types, so its outputs are known too. Where the type cannot be
told (``python_function``, mixed integer arithmetic, an operator from an unknown plugin) the
answer is ``None`` and the check happens on the first batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline.types import DataType, from_numpy_dtype

__all__ = ["node_dtype"]

#: Operators whose output has the type of their first input, unless ``dtype`` says otherwise.
_KEEPS_INPUT = frozenset(
    {
        "_transfer_to_cpu",
        "_transfer_to_gpu",
        "bb_flip",
        "bbox_paste",
        "brightness",
        "brightness_contrast",
        "color_space_conversion",
        "color_twist",
        "contrast",
        "coord_flip",
        "copy",
        "crop",
        "flip",
        "hue",
        "noise.gaussian",
        "pad",
        "paste",
        "random_resized_crop",
        "reshape",
        "resize",
        "rotate",
        "saturation",
        "slice",
        "transpose",
        "warp_affine",
    }
)
#: Operators whose output type is fixed when ``dtype`` is not given.
_FIXED = {
    "random.uniform": DataType.FLOAT,
    "random.normal": DataType.FLOAT,
    "random.coin_flip": DataType.INT32,
}
#: Multi-output sources whose outputs have fixed types.
_FLOAT_BITS = {DataType.FLOAT16: 16, DataType.FLOAT: 32, DataType.FLOAT64: 64}
_COMPARE = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
_BITWISE = frozenset({"bitand", "bitor", "bitxor", "bitnot", "lshift", "rshift"})
#: Arithmetic that always gives a floating result.
_FLOATING_OPS = (
    "truediv atan2 fpow fabs floor ceil sqrt rsqrt cbrt exp log log2 log10 sin cos tan asin acos "
    "atan sinh cosh tanh asinh acosh atanh"
)
_FLOATING = frozenset(_FLOATING_OPS.split())
_OUTPUTS = {"readers.file": (DataType.UINT8, DataType.INT32)}


def _arithmetic(name: str, inputs: list[DataType | None]) -> DataType | None:
    """The result type where the promotion rules leave no doubt: comparisons give BOOL, a float
    input gives the widest float, division and the float functions give FLOAT otherwise, and
    inputs of one type keep it. Mixed integer types are left to the first batch."""
    if name in _COMPARE:
        return DataType.BOOL
    if any(t is None for t in inputs):
        return None
    floats = [t for t in inputs if t in _FLOAT_BITS]
    if floats:
        return max(floats, key=_FLOAT_BITS.__getitem__)
    if name in _FLOATING:
        return DataType.FLOAT
    kinds = set(inputs)
    if len(kinds) != 1 or (kinds == {DataType.BOOL} and name not in _BITWISE):
        return None
    return inputs[0]


def _constant(args: dict[str, Any]) -> DataType | None:
    if args.get("fdata") is not None:
        return DataType.FLOAT
    if args.get("idata") is not None:
        return DataType.INT32
    try:
        return from_numpy_dtype(np.asarray(args.get("value")).dtype)
    except (TypeError, ValueError):
        return None


def node_dtype(node: Any) -> DataType | None:
    """The element type ``node`` will have at run time, or ``None`` when it cannot be told."""
    op = node.source
    name = op.schema.name
    explicit = op.args.get("dtype")
    if isinstance(explicit, DataType) and name != "external_source":
        return explicit
    if name in _FIXED:
        return _FIXED[name]
    if name in _KEEPS_INPUT and op.inputs:
        return node_dtype(op.inputs[0])
    if name in _OUTPUTS:
        return _OUTPUTS[name][node.index]
    if name == "constant":
        return _constant(op.args)
    if name.startswith("arithmetic."):
        return _arithmetic(name.removeprefix("arithmetic."), [node_dtype(x) for x in op.inputs])
    if name == "external_source":
        declared = explicit if isinstance(explicit, list | tuple) else [explicit]
        if node.index < len(declared) and isinstance(declared[node.index], DataType):
            return declared[node.index]
    return None
