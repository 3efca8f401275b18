"""Debug mode (``@pipeline_def(debug=True)``): the pipeline function runs again in every
iteration with the batches in hand, so that ``print(x)`` inside it shows the data.

As in DALI's debug mode, the function is re-run iteration by iteration and every operator call in
it returns a :class:`DataNodeDebug` holding that call's batch (``.get()`` gives the TensorList,
``.shape()`` the sample shapes); the operators must be called in the same order every time.

The batches are the graph run's own: the function is first run once to define the graph (its
prints then show symbolic nodes), which is built with every operator output requested, so that
nothing is pruned or fused away; each iteration runs that graph, then replays the function,
handing each call the outputs its operator computed. The outputs are therefore exactly the graph
run's, drawn with the same seeds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from feedline.core.graph import DataNode, Graph, OpNode
from feedline.core.graph.hooks import active_graph_hook
from feedline.core.pipeline.pipeline import Pipeline
from feedline.core.schema import OpSchema
from feedline.core.tensor import TensorListCPU

__all__ = ["DataNodeDebug", "DebugPipeline"]


class DataNodeDebug(DataNode):
    """A DataNode with its batch, as the operators of a debug-mode iteration return it."""

    __slots__ = ("_data",)

    def __init__(self, node: DataNode, data: Any) -> None:
        super().__init__(node.name, node.device, node.source, node.index)
        self._data = data

    def get(self) -> Any:
        """The batch (a TensorList)."""
        return self._data

    def shape(self, **_: Any) -> list[tuple[int, ...]]:  # type: ignore[override]
        """The shape of each sample of the batch."""
        return list(self._data.shape())

    def __repr__(self) -> str:
        batch = self._data.as_cpu() if hasattr(self._data, "as_cpu") else self._data
        samples = "\n".join(f"    {np.asarray(s)!r}".replace("\n", "\n    ") for s in batch)
        return (
            f"DataNodeDebug(name={self.name!r}, device={self.device!r}, data={batch!r}:\n{samples})"
        )

    __str__ = __repr__


class _Replayed:
    """What a replayed operator call returns to :func:`~feedline.core.graph.make_operator_call`:
    the operator's outputs, with this iteration's batches."""

    def __init__(self, op: OpNode, batches: Sequence[Any]) -> None:
        self.outputs = [DataNodeDebug(n, b) for n, b in zip(op.outputs, batches, strict=True)]
        self.on_error: str | None = None
        self._recorded = op

    def upstream(self) -> list[DataNode]:
        """What the recorded operator read (the conditionals' hook asks)."""
        return self._recorded.upstream()


class _ReplayGraph(Graph):
    """The graph an iteration's replay "defines": each operator call gets the next operator of
    the defined graph, in order, with its batches."""

    debug = True

    def __init__(self, ops: Sequence[OpNode], batches: Sequence[Sequence[Any]]) -> None:
        super().__init__()
        self._recorded = list(zip(ops, batches, strict=True))
        self._next = 0
        self._replayed: list[_Replayed] = []

    def add_op(  # type: ignore[override]
        self,
        schema: OpSchema,
        device: str,
        inputs: list[DataNode],
        arg_inputs: dict[str, DataNode],
        *args: Any,
        **kwargs: Any,
    ) -> _Replayed:
        # A graph hook (the conditionals' condition stack) sees the call as in a definition: it
        # splits the inputs into the branch being traced, which replays those splits first.
        hook = active_graph_hook()
        if hook is not None:
            hook.before_add(schema, inputs, arg_inputs)
        if self._next >= len(self._recorded) or self._recorded[self._next][0].schema is not schema:
            raise RuntimeError(
                f"Unexpected operator {schema.name!r}. Debug mode does not support changing the "
                "order of operators executed within the pipeline."
            )
        op, batches = self._recorded[self._next]
        self._next += 1
        replayed = _Replayed(op, batches)
        self._replayed.append(replayed)  # alive, as a graph keeps its nodes: ids stay unique
        if hook is not None:
            hook.after_add(replayed)  # type: ignore[arg-type]
        return replayed


class DebugPipeline(Pipeline):
    """A pipeline in debug mode (made by ``@pipeline_def(debug=True)``).

    Args:
        exec_func: the pipeline function with its arguments bound.
        **kwargs: the :class:`~feedline.core.pipeline.Pipeline` arguments.
    """

    def __init__(self, exec_func: Callable[[], Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._graph.debug = True
        self._exec_func = exec_func
        self._debug_ops: list[OpNode] = []
        self._num_user_outputs = 0

    def __enter__(self) -> Pipeline:
        raise RuntimeError(
            "Currently pipeline in debug mode works only with `pipeline_def` decorator. "
            "Using `with` statement is not supported."
        )

    def define_graph(self) -> tuple[Any, ...]:
        """Run the function once to define the graph: its outputs, then every output of every
        operator it called (so that each stays computed for the replays)."""
        result = self._exec_func()
        outputs = result if isinstance(result, tuple) else (() if result is None else (result,))
        self._num_user_outputs = len(outputs)
        self._debug_ops = list(self._graph.ops)
        return (*outputs, *(node for op in self._debug_ops for node in op.outputs))

    @property
    def num_outputs(self) -> int:
        """Number of outputs of the pipeline function."""
        self._ensure_defined()
        return self._num_user_outputs

    def _validate_outputs(self, outputs: Sequence[TensorListCPU]) -> None:
        super()._validate_outputs(outputs[: self._num_user_outputs])

    def _share(self) -> tuple[TensorListCPU, ...]:
        computed = super()._share()
        count = self._num_user_outputs
        batches, start = [], count
        for op in self._debug_ops:
            batches.append(computed[start : start + len(op.outputs)])
            start += len(op.outputs)
        with _ReplayGraph(self._debug_ops, batches):
            result = self._exec_func()
        values = result if isinstance(result, tuple) else (() if result is None else (result,))
        if len(values) != count:
            raise RuntimeError(
                f"the pipeline function returned {len(values)} outputs in debug mode, "
                f"{count} when the graph was defined"
            )
        outputs = tuple(
            value.get() if isinstance(value, DataNodeDebug) else computed[index]
            for index, value in enumerate(values)
        )
        self._shared = outputs
        return outputs
