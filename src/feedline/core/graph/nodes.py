"""The graph being defined: data nodes, operator nodes, and the calls that create them.

Operator calls create :class:`OpNode` objects whose outputs are :class:`DataNode` objects;
nothing runs until a pipeline is built and run. An operator called while a pipeline is being
defined on this thread (a pipeline enters its :class:`Graph` with ``with``) belongs to that
pipeline; one called outside any pipeline is *detached*, as in DALI: it belongs to no graph until
a pipeline whose outputs need it collects it (``set_outputs``, ``define_graph``).
An operator is placed on a device that has a registered kernel (see :mod:`.placement`).
DataNode arithmetic creates nodes of the (hidden) ``arithmetic.*`` operators, registered by the
built-in math plugin, through :mod:`.calls`.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from feedline.core.graph.hooks import active_graph_hook
from feedline.core.graph.not_iterable import not_iterable
from feedline.core.names import class_name, detached_name
from feedline.core.registry import TRANSFER_TO_CPU, TRANSFER_TO_GPU
from feedline.core.schema import OpSchema
from feedline.core.types import DataType

__all__ = ["DataNode", "Graph", "OpNode", "current_graph", "new_op", "output_device"]

_local = threading.local()
_serials = itertools.count()


def _binary(op: str, reverse: bool = False) -> Callable[[DataNode, Any], DataNode]:
    """A DataNode operator method creating an ``arithmetic.<op>`` node (operands swapped for the
    reflected ``__r*__`` methods)."""

    def method(self: DataNode, other: Any) -> DataNode:
        return _calls.arithmetic_node(op, [other, self] if reverse else [self, other])

    return method


def _unary(op: str) -> Callable[[DataNode], DataNode]:
    """A unary DataNode operator method creating an ``arithmetic.<op>`` node."""

    def method(self: DataNode) -> DataNode:
        return _calls.arithmetic_node(op, [self])

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
            f'"DataNode" was used in conditional context - it might have been used in truth '
            f"evaluation for `if` statement, logical expression or cast to a boolean "
            f"({self.name!r} has no truth value while the graph is defined). To use conditional "
            "execution via `if` statements you need to specify `enable_conditionals=True` in "
            "`@nvidia.dali.pipeline_def` decorator (`@feedline.pipeline_def` here); see "
            "docs/conditionals.md. Otherwise express the condition per sample with arithmetic "
            "(e.g. a mask multiply)."
        )

    def __iter__(self) -> NoReturn:
        """Refused: a DataNode is one batch (and, as in DALI, not a ``collections.abc.Iterable``).

        Raises:
            TypeError: always, saying how many outputs the operator has (so that ``a, b = node``
                on an operator with one output explains itself).
        """
        op = self.source
        if op is None:
            origin = "it is not an operator output"
        else:
            count = len(op.outputs)
            outputs = f"{count} output{'s' if count != 1 else ''}"
            origin = f"it is output {self.index} of operator {op.schema.name!r} ({outputs})"
        raise TypeError(
            f"DataNode {self.name!r} cannot be iterated or unpacked: {origin}, one batch. Unpack "
            "the operator call itself (`a, b = fn.op(...)`) for an operator with several "
            "outputs, and index the node (`node[0]`) for a part of each sample."
        )

    def shape(self, *, dtype: DataType | None = None, device: str = "cpu") -> DataNode:
        """The run-time shape of each sample, as a new node (``fn.shapes``; INT64 by default)."""
        kwargs: dict[str, Any] = {"device": device}
        if dtype is not None:
            kwargs["dtype"] = dtype
        result = _calls.make_operator_call("shapes", [self], kwargs)
        assert isinstance(result, DataNode)
        return result

    def property(self, key: str, *, device: str = "cpu") -> DataNode:
        """A metadata property of each sample (``"source_info"``, ``"layout"``) as a new node
        (``fn.get_property``)."""
        result = _calls.make_operator_call("get_property", [self], {"key": key, "device": device})
        assert isinstance(result, DataNode)
        return result

    def source_info(self, *, device: str = "cpu") -> DataNode:
        """Where each sample came from (a file path…), as bytes: ``property("source_info")``."""
        return self.property("source_info", device=device)

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


not_iterable(DataNode, add_iter=False)


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
        position: creation order in the pipeline (used to derive the seed); None for a
            detached operator until a pipeline collects it.
        serial: creation order among all operators of the process (a topological order of
            any graph, detached operators included).
        on_error: the operator's own error policy (``raise``/``skip``), or None for the
            pipeline's.
        error_name: the name its failures are reported under, when a graph pass merged the
            user's operator into this one (a decoder fused with the resize that follows it).
    """

    __slots__ = (
        "_graph",
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
        "serial",
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
        position: int | None,
        graph: Graph | None = None,
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
        self.serial = next(_serials)
        self._graph = None if graph is None else weakref.ref(graph)
        self.on_error: str | None = None
        self.error_name: str | None = None
        out_device = output_device(schema, device)
        names = schema.output_names(args, num_inputs=len(inputs))
        self.outputs = [
            DataNode(name if len(names) == 1 else f"{name}[{i}]", out_device, self, i)
            for i in range(len(names))
        ]

    @property
    def graph(self) -> Graph | None:
        """The graph (pipeline) this operator was defined in; None when detached."""
        return None if self._graph is None else self._graph()

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


class Graph:
    """The operators of one pipeline, in creation order (which is a topological order).

    ``with graph:`` makes it the graph that ``fn.*`` calls on this thread add to.

    Args:
        owner: the object that owns the graph (the pipeline), returned by :meth:`current_owner`.
    """

    debug = False
    """Whether it is a debug-mode pipeline's graph (see ``OpSchema.debug_unused``)."""

    def __init__(self, owner: Any = None) -> None:
        self._owner = None if owner is None else weakref.ref(owner)
        self.ops: list[OpNode] = []
        self.frozen = False
        self._names: set[str] = set()
        self._next_id = 0

    @property
    def owner(self) -> Any:
        """The pipeline that owns the graph (held weakly: the pipeline holds its graph)."""
        return None if self._owner is None else self._owner()

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
        """Append an operator node reading ``inputs`` and ``arg_inputs``.

        The inputs may come from detached operators or from another pipeline (as in DALI, the
        pipeline that builds the graph decides, see :func:`~.passes.check_membership`). An
        automatic name is ``__<Class>_<n>``, ``n`` counting this graph's automatic names.

        Raises:
            RuntimeError: the graph is frozen (its pipeline is built).
            ValueError: an input has no source operator, or ``name`` is taken.
        """
        if self.frozen:
            raise RuntimeError("cannot add operators to a pipeline that is already built")
        hook = active_graph_hook()
        if hook is not None:
            inputs, arg_inputs = hook.before_add(schema, inputs, arg_inputs)
        _check_sources(schema, [*inputs, *arg_inputs.values()])
        if name is None:
            name = self._auto_name(schema.name)
        elif name in self._names:
            raise ValueError(f"operator name {name!r} is already used in this pipeline")
        self._names.add(name)
        op = OpNode(
            schema, name, device, inputs, arg_inputs, args, seed, preserve, len(self.ops), self
        )
        self.ops.append(op)
        if hook is not None:
            hook.after_add(op)
        return op

    def _auto_name(self, op_name: str) -> str:
        while True:
            name = f"__{class_name(op_name)}_{self._next_id}"
            self._next_id += 1
            if name not in self._names:
                return name

    def adopt(self, ops: Sequence[OpNode]) -> None:
        """Give the detached operators among ``ops`` (a collected graph, in order) their
        positions in this graph, which derive their seeds: numbered after the operators defined
        so far, in graph order, so that the same program always draws the same numbers."""
        for op in ops:
            if op.position is None:
                op.position = len(self.ops)
                self.ops.append(op)


def _check_sources(schema: OpSchema, nodes: Sequence[DataNode]) -> None:
    for node in nodes:
        if node.source is None:
            raise ValueError(
                f"{schema.name}: input {node.name!r} is a DataNode without a source operator"
            )


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


def new_op(
    schema: OpSchema,
    device: str,
    inputs: list[DataNode],
    arg_inputs: dict[str, DataNode],
    args: dict[str, Any],
    seed: int | None = None,
    preserve: bool = False,
    name: str | None = None,
) -> OpNode:
    """An operator node in the graph being defined on this thread, or a detached one.

    Raises:
        RuntimeError: a detached operator that must not be pruned (``preserve=True`` or a
            side-effect operator), which no output could lead a pipeline to (DALI's error).
    """
    graph = Graph.current()
    if graph is not None:
        return graph.add_op(schema, device, inputs, arg_inputs, args, seed, preserve, name)
    if preserve or schema.no_prune:
        what = f"{schema.name} (side effects)" if schema.no_prune else f"{schema.name} (preserve)"
        raise RuntimeError(
            f"Current Pipeline not set!\n{what} must be used inside `define_graph` or current "
            "pipeline must be explicitly set using context manager (`with my_pipeline:`) or "
            "with a call to `Pipeline.push_current(my_pipeline)`."
        )
    _check_sources(schema, [*inputs, *arg_inputs.values()])
    name = name or detached_name(schema.name)
    return OpNode(schema, name, device, inputs, arg_inputs, args, seed, False, None)


def _add_internal(schema: OpSchema, node: DataNode, device: str) -> DataNode:
    return new_op(schema, device, [node], {}, {}).outputs[0]


# The calls build on the classes above; DataNode's operators reach them at call time.
from feedline.core.graph import calls as _calls  # noqa: E402
