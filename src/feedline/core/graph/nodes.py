"""The graph being defined: data nodes, operator nodes, and the calls that create them.

Operator calls inside a pipeline definition create :class:`OpNode` objects whose outputs are
:class:`DataNode` objects; nothing runs until the pipeline is built and run. The operators go
into the :class:`Graph` being defined on this thread (a pipeline enters its graph with ``with``).
An operator is placed on a device that has a registered kernel (see :mod:`.placement`).
DataNode arithmetic creates nodes of the (hidden) ``arithmetic.*`` operators, registered by the
built-in math plugin.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.graph.constants import constant_array
from feedline.core.graph.placement import is_host_source, place, resolve_operator
from feedline.core.registry import TRANSFER_TO_CPU, TRANSFER_TO_GPU
from feedline.core.schema import COMMON_ARGS, ON_ERROR_POLICIES, OpSchema
from feedline.core.types import DataType, ScalarConstant

__all__ = [
    "Constant",
    "DataNode",
    "Graph",
    "OpNode",
    "arithmetic_node",
    "constant_node",
    "current_graph",
    "make_operator_call",
    "output_device",
]

_local = threading.local()


def _binary(op: str, reverse: bool = False) -> Callable[[DataNode, Any], DataNode]:
    """A DataNode operator method creating an ``arithmetic.<op>`` node (operands swapped for the
    reflected ``__r*__`` methods)."""

    def method(self: DataNode, other: Any) -> DataNode:
        return arithmetic_node(op, [other, self] if reverse else [self, other])

    return method


def _unary(op: str) -> Callable[[DataNode], DataNode]:
    """A unary DataNode operator method creating an ``arithmetic.<op>`` node."""

    def method(self: DataNode) -> DataNode:
        return arithmetic_node(op, [self])

    return method


class DataNode:
    """A symbolic batch: output ``index`` of operator ``source``, living on ``device``.

    Constructed as in DALI, ``DataNode(name, device="cpu", source=None)``; a node without a
    source operator is refused where it is used.
    """

    __slots__ = ("device", "index", "name", "source")

    def __init__(
        self, name: str, device: str = "cpu", source: OpNode | None = None, index: int = 0
    ) -> None:
        if device not in ("cpu", "gpu"):
            raise ValueError(f"DataNode {name!r}: device must be 'cpu' or 'gpu', got {device!r}")
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

    def __getitem__(self, index: Any) -> DataNode:
        from feedline.core.graph.subscript import subscript  # it builds on this module

        return subscript(self, index)

    __add__, __radd__ = _binary("add"), _binary("add", reverse=True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", reverse=True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", reverse=True)
    __truediv__, __rtruediv__ = _binary("truediv"), _binary("truediv", reverse=True)
    __floordiv__, __rfloordiv__ = _binary("floordiv"), _binary("floordiv", reverse=True)
    __mod__, __rmod__ = _binary("mod"), _binary("mod", reverse=True)
    __pow__, __rpow__ = _binary("pow"), _binary("pow", reverse=True)
    __and__, __rand__ = _binary("bitand"), _binary("bitand", reverse=True)
    __or__, __ror__ = _binary("bitor"), _binary("bitor", reverse=True)
    __xor__, __rxor__ = _binary("bitxor"), _binary("bitxor", reverse=True)
    __lshift__, __rlshift__ = _binary("lshift"), _binary("lshift", reverse=True)
    __rshift__, __rrshift__ = _binary("rshift"), _binary("rshift", reverse=True)
    __eq__ = _binary("eq")  # type: ignore[assignment]
    __ne__ = _binary("ne")  # type: ignore[assignment]
    __lt__ = _binary("lt")
    __le__ = _binary("le")
    __gt__ = _binary("gt")
    __ge__ = _binary("ge")
    __neg__, __invert__, __abs__ = _unary("neg"), _unary("bitnot"), _unary("abs")

    def __pos__(self) -> DataNode:
        return self

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
        on_error: the operator's own error policy (``raise``/``skip``), or None for the
            pipeline's.
        error_name: the name its failures are reported under, when a graph pass merged the
            user's operator into this one (a decoder fused with the resize that follows it).
    """

    __slots__ = (
        "arg_inputs",
        "args",
        "device",
        "error_name",
        "inputs",
        "name",
        "on_error",
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
        self.on_error: str | None = None
        self.error_name: str | None = None
        out_device = output_device(schema, device)
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


def output_device(schema: OpSchema, device: str) -> str:
    """Where an operator's outputs live: on the GPU for ``mixed``/``gpu`` operators, except the
    GPU-to-CPU transfer (``.cpu()``), whose outputs are in host memory."""
    if schema is TRANSFER_TO_CPU:
        return "cpu"
    return "gpu" if device in ("gpu", "mixed") else "cpu"


def _auto_class_name(op_name: str) -> str:
    last = op_name.rsplit(".", 1)[-1]
    return "".join(part.capitalize() for part in re.split(r"[_\W]+", last) if part)


def auto_name(op_name: str, counters: dict[str, int]) -> str:
    """DALI-style automatic names: ``__<OpClass>_<n>``."""
    cls = _auto_class_name(op_name)
    index = counters.get(cls, 0)
    counters[cls] = index + 1
    return f"__{cls}_{index}"


class Graph:
    """The operators of one pipeline, in creation order (which is a topological order).

    ``with graph:`` makes it the graph that ``fn.*`` calls on this thread add to.

    Args:
        owner: the object that owns the graph (the pipeline), returned by :meth:`current_owner`.
    """

    def __init__(self, owner: Any = None) -> None:
        self.owner = owner
        self.ops: list[OpNode] = []
        self.frozen = False
        self._names: set[str] = set()
        self._name_counters: dict[str, int] = {}

    def __enter__(self) -> Graph:
        if not hasattr(_local, "stack"):
            _local.stack = []
        _local.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _local.stack.pop()

    @staticmethod
    def current() -> Graph | None:
        """The graph being defined on this thread, if any."""
        stack = getattr(_local, "stack", None)
        return stack[-1] if stack else None

    def add_op(
        self,
        schema: OpSchema,
        device: str,
        inputs: list[DataNode],
        arg_inputs: dict[str, DataNode],
        args: dict[str, Any],
        seed: int | None,
        preserve: bool,
        name: str | None,
    ) -> OpNode:
        """Append an operator node reading ``inputs`` and ``arg_inputs`` (nodes of this graph).

        Raises:
            RuntimeError: the graph is frozen (its pipeline is built).
            ValueError: an input belongs to another graph, or ``name`` is taken.
        """
        if self.frozen:
            raise RuntimeError("cannot add operators to a pipeline that is already built")
        for node in [*inputs, *arg_inputs.values()]:
            if node.source is None:
                raise ValueError(
                    f"{schema.name}: input {node.name!r} is a DataNode without a source operator"
                )
            if not any(node.source is op for op in self.ops):
                raise ValueError(
                    f"{schema.name}: input {node.name!r} was defined in another pipeline"
                )
        if name is None:
            name = auto_name(schema.name, self._name_counters)
            while name in self._names:
                name = auto_name(schema.name, self._name_counters)
        elif name in self._names:
            raise ValueError(f"operator name {name!r} is already used in this pipeline")
        self._names.add(name)
        op = OpNode(schema, name, device, inputs, arg_inputs, args, seed, preserve, len(self.ops))
        self.ops.append(op)
        return op


def current_graph(what: str) -> Graph:
    """The graph being defined on this thread.

    Raises:
        RuntimeError: none is (``what`` names the call that needs one).
    """
    graph = Graph.current()
    if graph is None:
        raise RuntimeError(
            f"{what} must be called while a pipeline is being defined (inside a function "
            "decorated with @pipeline_def, or a 'with pipe:' block)"
        )
    return graph


def _add_internal(schema: OpSchema, node: DataNode, device: str) -> DataNode:
    graph = current_graph(f"DataNode.{'gpu' if device == 'mixed' else 'cpu'}()")
    op = graph.add_op(schema, device, [node], {}, {}, None, False, None)
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


def constant_node(
    value: Any,
    dtype: DataType | None = None,
    shape: Any = None,
    layout: str | None = None,
    device: str | None = None,
    **kwargs: Any,
) -> DataNode:
    """A node producing the same constant sample in every iteration (``fn.constant``)."""
    array = constant_array(value, dtype, shape)
    call_kwargs: dict[str, Any] = {"value": array, "layout": layout or ""}
    if device is not None:
        call_kwargs["device"] = device
    call_kwargs.update(kwargs)
    result = make_operator_call("constant", [], call_kwargs)
    assert isinstance(result, DataNode)
    return result


def Constant(
    value: Any,
    dtype: DataType | None = None,
    shape: Any = None,
    layout: str | None = None,
    device: str | None = None,
    **kwargs: Any,
) -> Any:
    """A constant for a pipeline: a :class:`ScalarConstant` or a constant-producing graph node.

    A Python or NumPy scalar with no ``shape``, ``layout``, ``device`` or other keyword becomes a
    :class:`ScalarConstant` (used inline in expressions). Anything else (lists, arrays, a shape)
    becomes a ``constant`` operator node (default device ``cpu``); that form must be called inside
    a pipeline definition. Published as ``feedline.types.Constant``.
    """
    is_scalar = isinstance(value, bool | int | float | np.generic) or (
        isinstance(value, np.ndarray) and value.ndim == 0
    )
    if is_scalar and shape is None and layout is None and device is None and not kwargs:
        return ScalarConstant.from_value(value, dtype)
    return constant_node(value, dtype=dtype, shape=shape, layout=layout, device=device, **kwargs)


def make_operator_call(
    op_name: str, inputs: Sequence[Any], kwargs: Mapping[str, Any]
) -> DataNode | list[DataNode] | dict[str, DataNode]:
    """Create the graph node for ``fn.<op_name>(*inputs, **kwargs)`` in the current graph.

    A source with only a ``cpu`` kernel asked for on the GPU (``external_source`` or
    ``constant`` with ``device="gpu"``) runs on the CPU and its outputs are copied to the GPU.

    Returns:
        The single output node, or the list of output nodes (a dict by output name when the
        schema sets ``output_dict``).

    Raises:
        TypeError: bad inputs or arguments (see :meth:`OpSchema.validate`).
        ValueError: the device has no kernel, or the device rules are broken.
        RuntimeError: called outside a pipeline definition.
    """
    graph = current_graph(f"fn.{op_name}")
    entry = resolve_operator(op_name)
    schema = entry.schema
    kwargs = dict(kwargs)
    common = {key: kwargs.pop(key) for key in COMMON_ARGS if key in kwargs}
    inputs, kwargs = schema.bind_positional(inputs, kwargs)
    schema.check_num_inputs(len(inputs))
    nodes = [_as_input(x) for x in inputs]
    host_source = is_host_source(entry, common.get("device"), nodes)
    device = place(entry, "cpu" if host_source else common.get("device"), nodes)
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
    on_error = common.get("on_error")
    if on_error is not None and on_error not in ON_ERROR_POLICIES:
        raise ValueError(
            f"{op_name}: 'on_error' must be one of {', '.join(ON_ERROR_POLICIES)}, got {on_error!r}"
        )
    op = graph.add_op(schema, device, nodes, tensor, static, seed, preserve, name)
    op.on_error = on_error
    outputs = [node.gpu() for node in op.outputs] if host_source else list(op.outputs)
    if schema.output_dict:
        names = schema.output_names(static, num_inputs=len(nodes))
        return dict(zip(names, outputs, strict=True))
    return outputs[0] if len(outputs) == 1 else outputs
