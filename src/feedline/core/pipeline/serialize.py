"""Pipeline serialization (JSON) and Graphviz export."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.graph import DataNode, OpNode, resolve_schema
from feedline.core.pipeline.properties import OperatorConcurrency, StreamPolicy
from feedline.core.types import DataType, ImageType, InterpType

__all__ = ["dump_pipeline", "load_into", "load_pipeline", "to_dot"]

FORMAT = "feedline-pipeline"
VERSION = 1
_ENUMS: dict[str, type[enum.Enum]] = {
    "DataType": DataType,
    "InterpType": InterpType,
    "ImageType": ImageType,
    "StreamPolicy": StreamPolicy,
    "OperatorConcurrency": OperatorConcurrency,
}
_PARAMS = (
    "batch_size",
    "num_threads",
    "device_id",
    "seed",
    "bytes_per_sample",
    "set_affinity",
    "max_streams",
    "default_cuda_stream_priority",
    "enable_memory_stats",
    "py_num_workers",
    "py_start_method",
    "on_error",
    "max_errors",
    "stream_policy",
    "concurrency",
    "max_decoded_bytes",
)
_OMITTED = {"__omitted__": "callable"}


def _encode(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return {"__enum__": f"{type(value).__name__}.{value.name}"}
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype), "shape": value.shape}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, Mapping):
        return {"__dict__": {str(k): _encode(v) for k, v in value.items()}}
    if callable(value):
        return dict(_OMITTED)
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if isinstance(value, dict):
        if "__enum__" in value:
            type_name, member = value["__enum__"].split(".", 1)
            return _ENUMS[type_name][member]
        if "__ndarray__" in value:
            return np.asarray(value["__ndarray__"], dtype=value["dtype"]).reshape(value["shape"])
        if "__dict__" in value:
            return {k: _decode(v) for k, v in value["__dict__"].items()}
        if value == _OMITTED:
            return None
    return value


def _ref(node: DataNode) -> list[Any]:
    return [node.source.name, node.index]


def dump_pipeline(pipe: Any, ops: Sequence[OpNode]) -> str:
    """The JSON document of a :class:`~feedline.core.pipeline.Pipeline`'s (pruned) graph and
    parameters.

    Raises:
        RuntimeError: an operator is not serializable (e.g. ``python_function``).
    """
    records = []
    for op in ops:
        if not op.schema.serializable:
            raise RuntimeError(
                f"operator {op.name!r} ({op.schema.name}) cannot be serialized: it runs Python code"
            )
        records.append(
            {
                "name": op.name,
                "op": op.schema.name,
                "device": op.device,
                "inputs": [_ref(n) for n in op.inputs],
                "arg_inputs": {k: _ref(n) for k, n in op.arg_inputs.items()},
                "args": {k: _encode(v) for k, v in op.args.items()},
                "seed": _stored_seed(pipe, op),
                "preserve": op.preserve or any(n.source is op for n in pipe._sinks),
                "on_error": op.on_error,
            }
        )
    params = {name: _encode(getattr(pipe, name)) for name in _PARAMS}
    params["prefetch_queue_depth"] = pipe.prefetch_queue_depth
    document = {
        "format": FORMAT,
        "version": VERSION,
        "params": params,
        "ops": records,
        "outputs": [_ref(n) for n in pipe._outputs or []],
        "output_dtype": _encode(pipe._output_dtype),
        "output_ndim": _encode(pipe._output_ndim),
        "output_layout": _encode(pipe._output_layout),
    }
    return json.dumps(document)


def _stored_seed(pipe: Any, op: OpNode) -> int | None:
    """The seed stored for ``op``: its own, or the one derived from the pipeline's explicit seed
    (so the copy draws the same numbers); None without either, so that two pipelines defined
    alike serialize alike (as in DALI) and the copy draws from a new random seed."""
    if op.seed is None and pipe.seed is None:
        return None
    return pipe._op_seed(op)


def _read(serialized: str | bytes | None, filename: str | None) -> dict[str, Any]:
    """The validated document of :func:`dump_pipeline` output (given or read from a file)."""
    if (serialized is None) == (filename is None):
        raise ValueError("deserialize needs exactly one of serialized_pipeline and filename")
    if filename is not None:
        with open(filename, encoding="utf-8") as handle:
            serialized = handle.read()
    try:
        document = json.loads(serialized)  # type: ignore[arg-type]
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a serialized feedline pipeline: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError("not a serialized feedline pipeline (missing format marker)")
    if document.get("version") != VERSION:
        raise ValueError(f"unsupported serialized pipeline version {document.get('version')!r}")
    return document


def _output_specs(document: Mapping[str, Any]) -> dict[str, Any]:
    specs = {}
    for key in ("output_dtype", "output_ndim", "output_layout"):
        decoded = _decode(document.get(key))
        specs[key] = list(decoded) if isinstance(decoded, tuple) else decoded
    return specs


def load_pipeline(
    cls: type,
    serialized: str | bytes | None,
    filename: str | None,
    overrides: Mapping[str, Any],
) -> Any:
    """Rebuild and build a pipeline of class ``cls`` from :func:`dump_pipeline` output.

    ``overrides`` replace stored parameters, except DALI's ``-1`` for ``batch_size``,
    ``num_threads``, ``device_id`` and ``seed``, which keeps the stored value.
    """
    document = _read(serialized, filename)
    params = {name: _decode(value) for name, value in document["params"].items()}
    depth = overrides.get("prefetch_queue_depth", params.get("prefetch_queue_depth", 2))
    if isinstance(depth, Mapping) and set(depth) == {"cpu", "gpu"}:
        depth = {"cpu_size": depth["cpu"], "gpu_size": depth["gpu"]}
    params["prefetch_queue_depth"] = depth
    params["exec_pipelined"] = False
    params["exec_async"] = False
    params.update(_output_specs(document))
    params.update(
        {
            k: v
            for k, v in overrides.items()
            if k != "prefetch_queue_depth" and not (k in _FROM_STORED and _is_minus_one(v))
        }
    )
    pipe = cls(**params)
    _add_graph(pipe, document)
    pipe.build()
    return pipe


_FROM_STORED = ("batch_size", "num_threads", "device_id", "seed")


def _is_minus_one(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == -1


def load_into(pipe: Any, serialized: str | bytes) -> None:
    """Define ``pipe``'s graph from :func:`dump_pipeline` output (not built).

    The stored batch size and thread count replace ``None``/``-1``, the stored device ``-1``,
    the stored seed and output checks ``None``; ``pipe``'s other parameters stay.
    """
    document = _read(serialized, None)
    stored = document["params"]
    if pipe._batch_size in (None, -1):
        pipe._batch_size = stored["batch_size"]
    if pipe._num_threads in (None, -1):
        pipe._num_threads = stored["num_threads"]
    if pipe._device_id == -1:
        pipe._device_id = stored["device_id"]
    if pipe._seed is None and stored.get("seed") is not None:
        pipe._seed = pipe._effective_seed = int(stored["seed"])
    for key, value in _output_specs(document).items():
        if getattr(pipe, f"_{key}") is None:
            setattr(pipe, f"_{key}", value)
    _add_graph(pipe, document)


def _add_graph(pipe: Any, document: Mapping[str, Any]) -> None:
    nodes: dict[str, OpNode] = {}
    for record in document["ops"]:
        schema = resolve_schema(record["op"])
        args = {k: _decode(v) for k, v in record["args"].items()}
        inputs = [nodes[name].outputs[index] for name, index in record["inputs"]]
        arg_inputs = {
            k: nodes[name].outputs[index] for k, (name, index) in record["arg_inputs"].items()
        }
        node = pipe._graph.add_op(
            schema,
            record["device"],
            inputs,
            arg_inputs,
            args,
            record["seed"],
            record["preserve"],
            record["name"],
        )
        node.on_error = record.get("on_error")
        nodes[record["name"]] = node
    pipe._outputs = [nodes[name].outputs[index] for name, index in document["outputs"]]


def to_dot(
    ops: Sequence[OpNode],
    outputs: Sequence[DataNode],
    show_tensors: bool,
    show_ids: bool,
    use_colors: bool,
) -> str:
    """Graphviz dot text of a graph."""
    colors = {"cpu": "lightblue", "mixed": "plum", "gpu": "lightgreen"}
    lines = ["digraph feedline {", "  rankdir=LR;"]
    for op in ops:
        label = f"{op.name}\\n{op.schema.name}" + (f"\\nid {op.position}" if show_ids else "")
        style = f', style=filled, fillcolor="{colors[op.device]}"' if use_colors else ""
        lines.append(f'  "{op.name}" [shape=box, label="{label}"{style}];')
        for node in op.upstream():
            if show_tensors:
                lines.append(f'  "{node.name}" [shape=ellipse];')
                lines.append(f'  "{node.source.name}" -> "{node.name}";')
                lines.append(f'  "{node.name}" -> "{op.name}";')
            else:
                lines.append(f'  "{node.source.name}" -> "{op.name}";')
    for index, node in enumerate(outputs):
        lines.append(f'  "output {index}" [shape=doublecircle];')
        lines.append(f'  "{node.source.name}" -> "output {index}";')
    lines.append("}")
    return "\n".join(lines) + "\n"
