"""Defining a pipeline's graph (``set_outputs``, ``define_graph``, ``add_sink``, the
``iter_setup`` hook) and reading or writing it (serialization, Graphviz export), mixed into
:class:`~feedline.core.pipeline.Pipeline`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from feedline.core.graph import DataNode, Graph, OpNode, check_membership, constant_node, prune
from feedline.core.pipeline import serialize as _serialize
from feedline.core.types import ScalarConstant

__all__ = ["GraphDefinition", "require_source"]


def _holds_data_node(value: Any) -> bool:
    """Whether ``value`` is a list or tuple with a DataNode at any depth."""
    if isinstance(value, list | tuple):
        return any(isinstance(v, DataNode) or _holds_data_node(v) for v in value)
    return False


class GraphDefinition:
    """The graph-definition half of ``Pipeline``, which sets the attributes."""

    _graph: Graph
    _outputs: list[DataNode] | None
    _outputs_error: TypeError | None
    _sinks: list[DataNode]
    _prepared: list[OpNode] | None
    _built_ops: list[OpNode]
    _built: bool
    _built_before_with: list[bool]
    _enable_checkpointing: bool
    _check_output_lengths: Callable[[], None]  # from PipelineProperties

    def build(self) -> None:
        """Build the pipeline (implemented by ``Pipeline``)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the pipeline's resources (implemented by ``Pipeline``)."""
        raise NotImplementedError

    @staticmethod
    def current() -> GraphDefinition | None:
        """The pipeline being defined on this thread, if any."""
        graph = Graph.current()
        owner = graph.owner if graph is not None else None
        return owner if isinstance(owner, GraphDefinition) else None

    @staticmethod
    def push_current(pipeline: GraphDefinition) -> None:
        """Make ``pipeline`` the current one on this thread."""
        pipeline._graph.__enter__()

    @staticmethod
    def pop_current() -> GraphDefinition | None:
        """Undo the last :meth:`push_current`."""
        pipeline = GraphDefinition.current()
        if Graph.current() is not None:
            Graph.current().__exit__(None, None, None)
        return pipeline

    def __enter__(self) -> GraphDefinition:
        """Define the graph in this block (as in DALI); a pipeline built inside the block is
        closed when it ends, so ``with my_pipeline() as pipe: pipe.build(); ...`` frees its
        threads, worker processes and memory maps however the block is left."""
        self._graph.__enter__()
        self._built_before_with.append(self._built)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._graph.__exit__(*exc)
        if not self._built_before_with.pop() and self._built:
            self.close()

    def set_outputs(self, *outputs: Any) -> None:
        """Set the pipeline outputs (DataNodes, or constants that become constant nodes: a
        ``types.Constant`` scalar keeps its dtype).

        An output that is neither is reported when the pipeline is built, as in DALI, with its
        ``TypeError`` and words: a list or tuple holding DataNodes (a missing ``*``), or a value
        no constant can be made of (a string, ``None``...).
        """
        nodes: list[DataNode] = []
        self._outputs_error = None
        with self._graph:
            for index, value in enumerate(outputs):
                if isinstance(value, DataNode):
                    nodes.append(require_source(value, f"output {index}"))
                elif isinstance(value, ScalarConstant):
                    nodes.append(constant_node(value.value, dtype=value.dtype))
                elif _holds_data_node(value):
                    self._outputs_error = self._outputs_error or TypeError(
                        f"Illegal pipeline output type. The output {index} contains a nested "
                        "`DataNode`. Missing list/tuple expansion (*) is the likely cause."
                    )
                else:
                    try:
                        nodes.append(constant_node(value))
                    except (TypeError, ValueError) as error:
                        self._outputs_error = self._outputs_error or TypeError(
                            f"Illegal output type. The output {index} is a `{type(value)}`. "
                            "Allowed types are ``DataNode`` and types convertible to "
                            "`types.Constant` (numerical constants, 1D lists/tuple of numbers "
                            f"and ND arrays). ({error})"
                        )
        self._outputs = nodes

    def define_graph(self) -> Any:
        """Override in a subclass to define the graph (return the outputs)."""
        raise NotImplementedError(
            "define the pipeline with @pipeline_def, set_outputs() or by overriding define_graph()"
        )

    def add_sink(self, edge: DataNode) -> None:
        """Keep ``edge``'s operator (and what it reads) although no output uses it."""
        if not isinstance(edge, DataNode):
            raise TypeError(f"add_sink: expected a DataNode, got {type(edge).__name__}")
        if self._prepared is not None:
            raise RuntimeError("add_sink: the pipeline is already built")
        self._sinks.append(require_source(edge, "add_sink"))

    def iter_setup(self) -> None:
        """Override to prepare each iteration, e.g. with :meth:`feed_input` (DALI's legacy hook).

        Called on the thread that schedules the iteration (``run()``/``schedule_run()``), after
        the external sources' callbacks of that iteration and before its computation is queued;
        raise StopIteration to end the epoch.
        """

    def _ensure_defined(self, define_graph: Callable[[], Any] | None = None) -> None:
        if define_graph is not None:
            if not callable(define_graph):
                hint = (
                    " (to write a file, pass filename=...)" if isinstance(define_graph, str) else ""
                )
                raise TypeError(f"define_graph must be callable, got {define_graph!r}{hint}")
            if self._outputs is not None:
                raise RuntimeError(
                    "Duplicate graph definition: define_graph must not be given when the "
                    "outputs were already set (set_outputs(), @pipeline_def, "
                    "start_py_workers(), serialize() or an earlier build())"
                )
        if self._outputs is None:
            with self._graph:
                result = (define_graph or self.define_graph)()
            # As in DALI, define_graph may return its outputs as a tuple or a list.
            if isinstance(result, tuple | list):
                outputs = tuple(result)
            else:
                outputs = () if result is None else (result,)
            self.set_outputs(*outputs)
        if self._outputs_error is not None:
            raise self._outputs_error

    def _collect_graph(self) -> list[OpNode]:
        """The operators the outputs and sinks need (detached ones included, numbered into this
        pipeline on first collection), checked as DALI checks them.

        Raises:
            RuntimeError: two of them share a name, a checkpointing pipeline would run an
                operator it did not define, or the declared output dtypes/ndims do not have one
                entry per output.
        """
        self._check_output_lengths()
        ops = prune(self._graph.ops, [*(self._outputs or []), *self._sinks])
        check_membership(ops, self._graph, self._enable_checkpointing)
        self._graph.adopt(ops)
        return ops

    def serialize(
        self, define_graph: Callable[[], Any] | None = None, filename: str | None = None
    ) -> str:
        """The graph and parameters as a JSON document (callbacks omitted).

        Args:
            define_graph: defines the graph instead of :meth:`define_graph` (as in ``build``).
            filename: also write the document there.
        """
        self._ensure_defined(define_graph)
        text = _serialize.dump_pipeline(self, self._collect_graph())
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as handle:
                handle.write(text)
        return text

    @classmethod
    def deserialize(
        cls,
        serialized_pipeline: str | bytes | None = None,
        filename: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Rebuild a pipeline from :meth:`serialize` output; ``kwargs`` override parameters.

        The returned pipeline is built. External sources have no callback: feed them.
        """
        return _serialize.load_pipeline(cls, serialized_pipeline, filename, kwargs)

    def deserialize_and_build(self, serialized_pipeline: str | bytes) -> None:
        """Define this pipeline's graph from :meth:`serialize` output and build it.

        The stored batch size, thread count, device and seed are used where this pipeline was
        given none (or DALI's ``-1``); its other parameters are its own.

        Raises:
            RuntimeError: this pipeline's graph is already defined.
        """
        if self._outputs is not None or self._graph.ops:
            raise RuntimeError("deserialize_and_build: this pipeline's graph is already defined")
        _serialize.load_into(self, serialized_pipeline)
        self.build()

    def save_graph_to_dot_file(
        self,
        filename: str,
        show_tensors: bool = False,
        show_ids: bool = False,
        use_colors: bool = False,
    ) -> None:
        """Write the built graph as Graphviz dot text."""
        self.build()
        text = _serialize.to_dot(
            self._built_ops, self._outputs or [], show_tensors, show_ids, use_colors
        )
        with open(filename, "w", encoding="utf-8") as handle:
            handle.write(text)


def require_source(node: DataNode, what: str) -> DataNode:
    """``node``, or ValueError when it was constructed without a source operator."""
    if node.source is None:
        raise ValueError(f"{what}: DataNode {node.name!r} has no source operator")
    return node
