"""Operator calls: what ``fn.<name>(...)`` (and DataNode arithmetic, constants) turn into.

:func:`make_operator_call` validates a call against the operator's schema, places it on a device
and creates its node with :func:`~.nodes.new_op` (in the pipeline being defined, or detached).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.graph.constants import constant_array
from feedline.core.graph.nodes import DataNode, new_op
from feedline.core.graph.placement import is_host_source, place, resolve_operator
from feedline.core.schema import COMMON_ARGS, ON_ERROR_POLICIES
from feedline.core.types import ENUM_CLASSES, DataType, ScalarConstant, enum_data_type

__all__ = ["Constant", "arithmetic_node", "constant_node", "make_operator_call"]


def _as_input(value: Any) -> DataNode:
    if isinstance(value, DataNode):
        return value
    if isinstance(value, ScalarConstant):
        return constant_node(value.value, dtype=value.dtype)
    if isinstance(value, bool | int | float | np.generic | np.ndarray | list | tuple):
        if enum_data_type(value) is not None:
            return constant_node(value)
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
    :class:`ScalarConstant` (used inline in expressions). Anything else (lists, arrays, a shape,
    enum members or an enum ``dtype``, as in DALI) becomes a ``constant`` operator node (default
    device ``cpu``), in the pipeline being defined or detached. Published as
    ``feedline.types.Constant``.
    """
    is_enum = enum_data_type(value) is not None or (
        dtype is not None and DataType(dtype) in ENUM_CLASSES
    )
    is_scalar = not is_enum and (
        isinstance(value, bool | int | float | np.generic)
        or (isinstance(value, np.ndarray) and value.ndim == 0)
    )
    if is_scalar and shape is None and layout is None and device is None and not kwargs:
        return ScalarConstant.from_value(value, dtype)
    return constant_node(value, dtype=dtype, shape=shape, layout=layout, device=device, **kwargs)


def make_operator_call(
    op_name: str, inputs: Sequence[Any], kwargs: Mapping[str, Any]
) -> DataNode | list[Any] | dict[str, DataNode]:
    """Create the graph node for ``fn.<op_name>(*inputs, **kwargs)`` in the current graph (a
    detached node outside any pipeline definition).

    A source with only a ``cpu`` kernel asked for on the GPU (``external_source`` or
    ``constant`` with ``device="gpu"``) runs on the CPU and its outputs are copied to the GPU.

    DALI's multiple input sets: when inputs are lists of DataNodes (of one length; the other
    inputs are repeated), one operator is created per position, with the same arguments, and
    the outputs come back as a list per output (a flat list for a one-output operator); one
    input set (lists of one node) gives the operator's outputs as a call without lists does.

    Returns:
        The single output node, or the list of output nodes (a dict by output name when the
        schema sets ``output_dict``).

    Raises:
        TypeError: bad inputs or arguments (see :meth:`OpSchema.validate`).
        ValueError: the device has no kernel, the device rules are broken, or input sets of
            different lengths.
        RuntimeError: a ``preserve=True`` or side-effect operator called outside a pipeline
            definition.
    """
    sets = _input_sets(op_name, inputs)
    if sets is None:
        return _make_one(op_name, inputs, kwargs)
    if len(sets) == 1:  # as in DALI, one input set gives the operator's outputs unwrapped
        return _make_one(op_name, sets[0], kwargs)
    results = []
    for input_set in sets:
        result = _make_one(op_name, input_set, kwargs)
        if isinstance(result, dict):
            raise TypeError(f"{op_name}: multiple input sets need an operator with list outputs")
        results.append([result] if isinstance(result, DataNode) else list(result))
    if len(results[0]) == 1:
        return [outputs[0] for outputs in results]
    return [list(group) for group in zip(*results, strict=True)]


def _input_sets(op_name: str, inputs: Sequence[Any]) -> list[list[Any]] | None:
    """The input sets of a call whose inputs include lists of DataNodes (None when none does)."""
    lists = [x for x in inputs if isinstance(x, list) and any(isinstance(v, DataNode) for v in x)]
    if not lists:
        return None
    if not resolve_operator(op_name).schema.input_sets:
        raise TypeError(
            f"{op_name}: Expected inputs of type `DataNode`. Received input of type 'list'. "
            "Python Operators do not support Multiple Input Sets."
        )
    count = len(lists[0])
    if any(len(x) != count for x in lists):
        raise ValueError(
            f"All argument lists for Multiple Input Sets used with operator `{op_name}` must "
            "have the same length"
        )
    return [
        [x[i] if any(x is listed for listed in lists) else x for x in inputs] for i in range(count)
    ]


def _make_one(
    op_name: str, inputs: Sequence[Any], kwargs: Mapping[str, Any]
) -> DataNode | list[DataNode] | dict[str, DataNode]:
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
                f'{op_name}: Invalid device "gpu" for argument {arg!r}: named arguments must be '
                f"on CPU, but {node.name!r} is on gpu"
            )
    name = common.get("name")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{op_name}: 'name' must be a str, got {type(name).__name__}")
    seed = common.get("seed")
    if seed is not None and (not isinstance(seed, int | np.integer) or isinstance(seed, bool)):
        raise TypeError(f"{op_name}: 'seed' must be an int, got {type(seed).__name__}")
    if seed is not None and not schema.random:
        warnings.warn(  # DALI's words (its tests match them); the stack level names the call
            'The argument "seed" should not be used with operators that don\'t use random numbers.',
            DeprecationWarning,
            stacklevel=4,
        )
        seed = None
    preserve = bool(common.get("preserve", False))
    on_error = common.get("on_error")
    if on_error is not None and on_error not in ON_ERROR_POLICIES:
        raise ValueError(
            f"{op_name}: 'on_error' must be one of {', '.join(ON_ERROR_POLICIES)}, got {on_error!r}"
        )
    op = new_op(schema, device, nodes, tensor, static, seed, preserve, name)
    op.on_error = on_error
    outputs = [node.gpu() for node in op.outputs] if host_source else list(op.outputs)
    if schema.output_dict:
        names = schema.output_names(static, num_inputs=len(nodes))
        return dict(zip(names, outputs, strict=True))
    if len(outputs) == 1 and not (schema.output_list and schema.output_list(static)):
        return outputs[0]
    return outputs
