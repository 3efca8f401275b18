"""The symbolic graph: data nodes, operator nodes, pruning, ordering and device rules.

Operator calls inside a pipeline definition create :class:`OpNode` objects whose outputs are
:class:`DataNode` objects; nothing runs until the pipeline is built and run. DataNode arithmetic
creates nodes of the (hidden) ``arithmetic.*`` operators, registered by the built-in math plugin.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from feedline.core.schema import COMMON_ARGS, OpSchema
from feedline.core.types import DataType, ScalarConstant, from_numpy_dtype, to_numpy_dtype

if TYPE_CHECKING:
    from feedline.core.pipeline import Pipeline

__all__ = [
    "TRANSFER_TO_CPU",
    "TRANSFER_TO_GPU",
    "DataNode",
    "OpNode",
    "arithmetic_node",
    "constant_node",
    "make_operator_call",
    "ordered_ops",
    "prune",
    "resolve_schema",
]

DEVICES = ("cpu", "mixed", "gpu")

TRANSFER_TO_GPU = OpSchema(
    "_transfer_to_gpu",
    "Copy a CPU batch to the GPU.",
    outputs=("output",),
    devices=("mixed",),
    hidden=True,
)
TRANSFER_TO_CPU = OpSchema(
    "_transfer_to_cpu",
    "Copy a GPU batch to the CPU.",
    outputs=("output",),
    devices=("gpu",),
    hidden=True,
)
_INTERNAL_SCHEMAS = {s.name: s for s in (TRANSFER_TO_GPU, TRANSFER_TO_CPU)}


class DataNode:
    """A symbolic batch: output ``index`` of operator ``source``, living on ``device``."""

    __slots__ = ("device", "index", "name", "source")

    def __init__(self, name: str, device: str, source: OpNode, index: int) -> None:
        self.name = name
        self.device = device
        self.source = source
        self.index = index

    def gpu(self) -> DataNode:
        """This batch copied to the GPU (a transfer node)."""
        if self.device == "gpu":
            return self
        return _add_internal(TRANSFER_TO_GPU, self, "mixed")

    def cpu(self) -> DataNode:
        """This batch copied back to the CPU (a transfer node)."""
        if self.device == "cpu":
            return self
        return _add_internal(TRANSFER_TO_CPU, self, "gpu")

    def __bool__(self) -> bool:
        raise TypeError(
            f"DataNode {self.name!r} is symbolic: it has no truth value while the graph is being "
            "defined. Use per-sample operators (e.g. arithmetic, feedline.math, or a mask "
            "multiply) instead of Python 'if'/'and'/'or' on DataNodes"
        )

    def __iter__(self) -> Any:
        raise TypeError(f"DataNode {self.name!r} is symbolic and cannot be iterated")

    def __repr__(self) -> str:
        return f"DataNode(name={self.name!r}, device={self.device!r})"

    def _binary(self, op: str, other: Any, reverse: bool = False) -> DataNode:
        operands = [other, self] if reverse else [self, other]
        return arithmetic_node(op, operands)

    def __add__(self, other: Any) -> DataNode:
        return self._binary("add", other)

    def __radd__(self, other: Any) -> DataNode:
        return self._binary("add", other, True)

    def __sub__(self, other: Any) -> DataNode:
        return self._binary("sub", other)

    def __rsub__(self, other: Any) -> DataNode:
        return self._binary("sub", other, True)

    def __mul__(self, other: Any) -> DataNode:
        return self._binary("mul", other)

    def __rmul__(self, other: Any) -> DataNode:
        return self._binary("mul", other, True)

    def __truediv__(self, other: Any) -> DataNode:
        return self._binary("truediv", other)

    def __rtruediv__(self, other: Any) -> DataNode:
        return self._binary("truediv", other, True)

    def __floordiv__(self, other: Any) -> DataNode:
        return self._binary("floordiv", other)

    def __rfloordiv__(self, other: Any) -> DataNode:
        return self._binary("floordiv", other, True)

    def __mod__(self, other: Any) -> DataNode:
        return self._binary("mod", other)

    def __rmod__(self, other: Any) -> DataNode:
        return self._binary("mod", other, True)

    def __pow__(self, other: Any) -> DataNode:
        return self._binary("pow", other)

    def __rpow__(self, other: Any) -> DataNode:
        return self._binary("pow", other, True)

    def __eq__(self, other: Any) -> DataNode:  # type: ignore[override]
        return self._binary("eq", other)

    def __ne__(self, other: Any) -> DataNode:  # type: ignore[override]
        return self._binary("ne", other)

    def __lt__(self, other: Any) -> DataNode:
        return self._binary("lt", other)

    def __le__(self, other: Any) -> DataNode:
        return self._binary("le", other)

    def __gt__(self, other: Any) -> DataNode:
        return self._binary("gt", other)

    def __ge__(self, other: Any) -> DataNode:
        return self._binary("ge", other)

    def __and__(self, other: Any) -> DataNode:
        return self._binary("bitand", other)

    def __rand__(self, other: Any) -> DataNode:
        return self._binary("bitand", other, True)

    def __or__(self, other: Any) -> DataNode:
        return self._binary("bitor", other)

    def __ror__(self, other: Any) -> DataNode:
        return self._binary("bitor", other, True)

    def __xor__(self, other: Any) -> DataNode:
        return self._binary("bitxor", other)

    def __rxor__(self, other: Any) -> DataNode:
        return self._binary("bitxor", other, True)

    def __lshift__(self, other: Any) -> DataNode:
        return self._binary("lshift", other)

    def __rlshift__(self, other: Any) -> DataNode:
        return self._binary("lshift", other, True)

    def __rshift__(self, other: Any) -> DataNode:
        return self._binary("rshift", other)

    def __rrshift__(self, other: Any) -> DataNode:
        return self._binary("rshift", other, True)

    def __neg__(self) -> DataNode:
        return arithmetic_node("neg", [self])

    def __pos__(self) -> DataNode:
        return self

    def __invert__(self) -> DataNode:
        return arithmetic_node("bitnot", [self])

    def __abs__(self) -> DataNode:
        return arithmetic_node("abs", [self])

    __hash__ = object.__hash__


class OpNode:
    """One operator instance in a graph.

    Attributes:
        schema: the operator's schema.
        name: unique name in the pipeline.
        device: ``cpu``, ``mixed`` or ``gpu``.
        inputs: positional input nodes.
        arg_inputs: per-sample argument nodes by argument name.
        args: validated static arguments.
        seed: the explicit ``seed`` argument, or None (derived from the pipeline seed at build).
        preserve: keep even when unused.
        outputs: the output nodes.
        position: creation order in the pipeline (used to derive the seed).
    """

    __slots__ = (
        "arg_inputs",
        "args",
        "device",
        "inputs",
        "name",
        "outputs",
        "position",
        "preserve",
        "schema",
        "seed",
    )

    def __init__(
        self,
        schema: OpSchema,
        name: str,
        device: str,
        inputs: list[DataNode],
        arg_inputs: dict[str, DataNode],
        args: dict[str, Any],
        seed: int | None,
        preserve: bool,
        position: int,
    ) -> None:
        self.schema = schema
        self.name = name
        self.device = device
        self.inputs = inputs
        self.arg_inputs = arg_inputs
        self.args = args
        self.seed = seed
        self.preserve = preserve
        self.position = position
        out_device = "gpu" if device in ("gpu", "mixed") else "cpu"
        names = schema.output_names(args, num_inputs=len(inputs))
        self.outputs = [
            DataNode(name if len(names) == 1 else f"{name}[{i}]", out_device, self, i)
            for i in range(len(names))
        ]

    def upstream(self) -> list[DataNode]:
        """Every node this operator reads (inputs, then argument inputs)."""
        return [*self.inputs, *self.arg_inputs.values()]

    def __repr__(self) -> str:
        return f"OpNode({self.schema.name!r}, name={self.name!r}, device={self.device!r})"


def _auto_class_name(op_name: str) -> str:
    last = op_name.rsplit(".", 1)[-1]
    return "".join(part.capitalize() for part in re.split(r"[_\W]+", last) if part)


def _current_pipeline(what: str) -> Pipeline:
    from feedline.core.pipeline import Pipeline

    pipe = Pipeline.current()
    if pipe is None:
        raise RuntimeError(
            f"{what} must be called while a pipeline is being defined (inside a function "
            "decorated with @pipeline_def, or a 'with pipe:' block)"
        )
    return pipe


def _add_internal(schema: OpSchema, node: DataNode, device: str) -> DataNode:
    pipe = _current_pipeline(f"DataNode.{'gpu' if device == 'mixed' else 'cpu'}()")
    op = pipe._add_op(schema, device, [node], {}, {}, None, False, None)
    return op.outputs[0]


def _as_input(value: Any) -> DataNode:
    if isinstance(value, DataNode):
        return value
    if isinstance(value, ScalarConstant):
        return constant_node(value.value, dtype=value.dtype)
    if isinstance(value, bool | int | float | np.generic | np.ndarray | list | tuple):
        if isinstance(value, bool | int | float | np.generic):
            scalar = ScalarConstant.from_value(value)
            return constant_node(scalar.value, dtype=scalar.dtype)
        return constant_node(value)
    raise TypeError(
        f"expected a DataNode or a constant as an operator input, got {type(value).__name__}"
    )


def arithmetic_node(op: str, operands: Sequence[Any], caller: str | None = None) -> DataNode:
    """The node of ``arithmetic.<op>`` over ``operands`` (DataNodes and constants).

    Constants become constant nodes of their literal type; if any operand is on the GPU, all are
    moved there. ``caller`` names the user-facing function in errors.

    Raises:
        TypeError: no operand is a DataNode.
    """
    if not any(isinstance(x, DataNode) for x in operands):
        given = ", ".join(type(x).__name__ for x in operands)
        raise TypeError(
            f"{caller or f'arithmetic {op!r}'}: at least one argument must be a DataNode (a "
            f"pipeline batch), got ({given}); compute constant expressions in Python instead"
        )
    device = (
        "gpu" if any(isinstance(x, DataNode) and x.device == "gpu" for x in operands) else "cpu"
    )
    nodes = [_as_input(x) for x in operands]
    if device == "gpu":
        nodes = [n.gpu() for n in nodes]
    result = make_operator_call(f"arithmetic.{op}", nodes, {"device": device})
    assert isinstance(result, DataNode)
    return result


def _constant_array(value: Any, dtype: DataType | None, shape: Any) -> np.ndarray:
    """DALI's rules for the data of a constant node (spec §4.8)."""
    if isinstance(value, list | tuple):
        flat = np.asarray(value).ravel().tolist() if len(value) else []
        if dtype is None:
            if any(isinstance(v, float) for v in flat) or not flat:
                np_dtype: Any = np.float32
            elif any(isinstance(v, int) and not isinstance(v, bool) for v in flat):
                np_dtype = np.int32
            else:
                np_dtype = np.bool_
        else:
            np_dtype = to_numpy_dtype(dtype)
        array = np.asarray(value, dtype=np_dtype)
    else:
        array = np.asarray(value)
        if dtype is not None:
            array = array.astype(to_numpy_dtype(dtype))
        elif array.dtype == np.float64 and not isinstance(value, np.generic):
            array = array.astype(np.float32)
        elif array.dtype == np.int64 and not isinstance(value, np.generic):
            array = array.astype(np.int32)
        elif isinstance(value, bool):
            array = array.astype(np.bool_)
    from_numpy_dtype(array.dtype)
    if shape is not None:
        target = tuple(int(s) for s in (shape if isinstance(shape, Iterable) else (shape,)))
        array = (
            np.broadcast_to(array, target) if array.size == 1 else array.reshape(target)
        ).copy()
    return np.array(array, order="C")


def constant_node(
    value: Any,
    dtype: DataType | None = None,
    shape: Any = None,
    layout: str | None = None,
    device: str | None = None,
    **kwargs: Any,
) -> DataNode:
    """A node producing the same constant sample in every iteration (``fn.constant``)."""
    array = _constant_array(value, dtype, shape)
    call_kwargs: dict[str, Any] = {"value": array, "layout": layout or ""}
    if device is not None:
        call_kwargs["device"] = device
    call_kwargs.update(kwargs)
    result = make_operator_call("constant", [], call_kwargs)
    assert isinstance(result, DataNode)
    return result


def resolve_schema(op_name: str) -> OpSchema:
    """The schema of operator ``op_name`` (loading plugins if needed).

    Raises:
        AttributeError: no such operator; names close matches and plugins that failed to load.
    """
    if op_name in _INTERNAL_SCHEMAS:
        return _INTERNAL_SCHEMAS[op_name]
    from feedline.core.plugins import get_plugin_system

    system = get_plugin_system()
    registry = system.ensure_loaded()
    entry = registry.operators.get(op_name)
    if entry is None:
        import difflib

        close = difflib.get_close_matches(op_name, list(registry.operators), n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise AttributeError(
            f"no operator named {op_name!r} is registered.{hint}{system.missing_operator_hint()}"
        )
    return entry.schema


def make_operator_call(
    op_name: str, inputs: Sequence[Any], kwargs: Mapping[str, Any]
) -> DataNode | list[DataNode] | dict[str, DataNode]:
    """Create the graph node for ``fn.<op_name>(*inputs, **kwargs)`` in the current pipeline.

    Returns:
        The single output node, or the list of output nodes (a dict by output name when the
        schema sets ``output_dict``).

    Raises:
        TypeError: bad inputs or arguments (see :meth:`OpSchema.validate`).
        ValueError: device rules (spec §4.3) are broken.
        RuntimeError: called outside a pipeline definition.
    """
    pipe = _current_pipeline(f"fn.{op_name}")
    schema = resolve_schema(op_name)
    kwargs = dict(kwargs)
    common = {key: kwargs.pop(key) for key in COMMON_ARGS if key in kwargs}
    schema.check_num_inputs(len(inputs))
    nodes = [_as_input(x) for x in inputs]
    device = common.get("device")
    if device is None:
        device = "gpu" if any(n.device == "gpu" for n in nodes) else "cpu"
    if device not in DEVICES:
        raise ValueError(f"{op_name}: unknown device {device!r}; expected cpu, mixed or gpu")
    if device not in schema.devices:
        raise ValueError(
            f"{op_name}: no {device!r} implementation (supported: {', '.join(schema.devices)})"
        )
    if device in ("cpu", "mixed"):
        for index, node in enumerate(nodes):
            if node.device == "gpu":
                raise ValueError(
                    f"input {index} of {device} operator {op_name!r} is {node.name!r}, stored on "
                    "incompatible device gpu; call .cpu() on it or run the operator on the gpu"
                )
    static, tensor = schema.validate(kwargs, lambda v: isinstance(v, DataNode))
    for arg, node in tensor.items():
        if node.device != "cpu":
            raise ValueError(
                f"{op_name}: named arguments must be on CPU, but {arg!r} is {node.name!r} on gpu"
            )
    name = common.get("name")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{op_name}: 'name' must be a str, got {type(name).__name__}")
    seed = common.get("seed")
    if seed is not None and (not isinstance(seed, int | np.integer) or isinstance(seed, bool)):
        raise TypeError(f"{op_name}: 'seed' must be an int, got {type(seed).__name__}")
    preserve = bool(common.get("preserve", False))
    op = pipe._add_op(schema, device, nodes, tensor, static, seed, preserve, name)
    if schema.output_dict:
        names = schema.output_names(static, num_inputs=len(nodes))
        return dict(zip(names, op.outputs, strict=True))
    return op.outputs[0] if len(op.outputs) == 1 else list(op.outputs)


def prune(ops: Sequence[OpNode], outputs: Sequence[DataNode]) -> list[OpNode]:
    """The operators needed for ``outputs`` plus sinks (``preserve``/``no_prune``), in order."""
    keep: set[int] = set()
    stack = [node.source for node in outputs]
    stack += [op for op in ops if op.preserve or op.schema.no_prune]
    while stack:
        op = stack.pop()
        if id(op) in keep:
            continue
        keep.add(id(op))
        stack.extend(node.source for node in op.upstream())
    return [op for op in ops if id(op) in keep]


def ordered_ops(ops: Sequence[OpNode]) -> list[OpNode]:
    """Topological order (creation order already is one; checked for foreign nodes)."""
    seen: set[int] = set()
    for op in ops:
        for node in op.upstream():
            if id(node.source) not in seen:
                raise ValueError(
                    f"operator {op.name!r} reads {node.name!r}, which belongs to another pipeline"
                )
        seen.add(id(op))
    return list(ops)


def auto_name(op_name: str, counters: dict[str, int]) -> str:
    """DALI-style automatic names: ``__<OpClass>_<n>``."""
    cls = _auto_class_name(op_name)
    index = counters.get(cls, 0)
    counters[cls] = index + 1
    return f"__{cls}_{index}"
