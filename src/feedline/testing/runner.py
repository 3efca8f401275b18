"""Running one operator in a small pipeline fed by external sources, in an isolated registry."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.plugins import PluginSystem, use_plugin_system

__all__ = ["RunResult", "collect", "isolated_plugins", "operator_pipeline", "run_operator"]

RunResult = list[list[tuple[list[np.ndarray], str]]]
"""Per iteration, per output: the samples (NumPy copies) and the output layout."""


@contextlib.contextmanager
def isolated_plugins(*plugins: Any, autoload: bool = False) -> Iterator[PluginSystem]:
    """A plugin system of its own, active inside the block.

    Args:
        *plugins: plugin modules or objects to register (as entry points would).
        autoload: also load every installed ``feedline.plugins`` entry point.
    """
    system = PluginSystem(autoload=autoload)
    for plugin in plugins:
        system.register(plugin)
    with use_plugin_system(system):
        yield system


def _fn_target(name: str) -> Any:
    from feedline import fn

    target: Any = fn
    for part in name.split("."):
        target = getattr(target, part)
    return target


def _host(tensor_list: Any) -> tuple[list[np.ndarray], str]:
    cpu = tensor_list.as_cpu() if hasattr(tensor_list, "as_cpu") else tensor_list
    return [np.array(cpu.at(i), copy=True) for i in range(len(cpu))], cpu.layout()


def collect(pipe: Any, iterations: int) -> RunResult:
    """Run a built pipeline ``iterations`` times; the outputs copied to NumPy."""
    return [[_host(out) for out in pipe.run()] for _ in range(iterations)]


def operator_pipeline(
    name: str,
    inputs: Sequence[Sequence[np.ndarray]] = (),
    layouts: Sequence[str | None] = (),
    args: Mapping[str, Any] | None = None,
    arg_inputs: Mapping[str, Sequence[np.ndarray]] | None = None,
    *,
    batch_size: int | None = None,
    num_threads: int = 1,
    seed: int = 1234,
    device: str = "cpu",
    **pipeline_kwargs: Any,
) -> Any:
    """A built pipeline whose outputs are those of one ``fn.<name>`` call.

    Args:
        name: the operator, e.g. ``"resize"``.
        inputs: one batch (a list of samples) per positional input, fed every iteration.
        layouts: the layout of each input (default: none).
        args: keyword arguments of the call.
        arg_inputs: per-sample argument inputs, one batch each.
        batch_size: default: the size of the first input batch, else 4.
        num_threads: the pipeline's thread count.
        seed: the pipeline's seed.
        device: ``cpu``, or ``gpu``/``mixed`` to copy the inputs to the GPU and run that kernel.
        **pipeline_kwargs: further :class:`~feedline.Pipeline` arguments.
    """
    from feedline import fn, pipeline_def

    batches = [[np.ascontiguousarray(s) for s in batch] for batch in inputs]
    size = batch_size or (len(batches[0]) if batches else 4)
    gpu = device != "cpu"

    def feed(batch: list[np.ndarray], layout: str | None = None) -> Any:
        node = fn.external_source(source=lambda: batch, batch=True, layout=layout or "")
        return node.gpu() if gpu and device == "gpu" else node

    @pipeline_def(
        batch_size=size,
        num_threads=num_threads,
        device_id=0 if gpu else None,
        seed=seed,
        **pipeline_kwargs,
    )
    def one_operator() -> Any:
        nodes = [feed(b, layouts[i] if i < len(layouts) else None) for i, b in enumerate(batches)]
        extra = {
            k: fn.external_source(source=[list(v)], cycle=True, batch=True)
            for k, v in (arg_inputs or {}).items()
        }
        call = dict(args or {})
        if gpu:
            call["device"] = device
        outputs = _fn_target(name)(*nodes, **call, **extra)
        if isinstance(outputs, dict):  # readers.tfrecord: one output per feature, in order
            return tuple(outputs.values())
        return tuple(outputs) if isinstance(outputs, list | tuple) else outputs

    pipe = one_operator()
    pipe.build()
    return pipe


def run_operator(
    name: str,
    inputs: Sequence[Sequence[np.ndarray]] = (),
    layouts: Sequence[str | None] = (),
    args: Mapping[str, Any] | None = None,
    arg_inputs: Mapping[str, Sequence[np.ndarray]] | None = None,
    *,
    iterations: int = 2,
    **options: Any,
) -> RunResult:
    """Run ``fn.<name>`` for ``iterations`` iterations and return its outputs (the arguments
    are those of :func:`operator_pipeline`)."""
    pipe = operator_pipeline(name, inputs, layouts, args, arg_inputs, **options)
    try:
        return collect(pipe, iterations)
    finally:
        pipe.close()
