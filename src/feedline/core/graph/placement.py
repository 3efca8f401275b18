"""Where an operator call goes: the registry entry of an operator, and the device it runs on.

An operator is placed on a device that has a registered kernel (asked of the registry), and the
device rules between an operator and its inputs are checked here, before a node is created.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from feedline.core.errors import DevicePlacementError
from feedline.core.plugins import get_plugin_system
from feedline.core.registry import DEVICES, TRANSFER_TO_GPU, OperatorEntry
from feedline.core.schema import OpSchema

if TYPE_CHECKING:
    from feedline.core.graph.nodes import DataNode

__all__ = ["is_host_source", "place", "resolve_operator", "resolve_schema"]


def resolve_operator(op_name: str) -> OperatorEntry:
    """The registry entry of operator ``op_name`` (loading plugins if needed).

    Raises:
        AttributeError: no such operator; names close matches and plugins that failed to load.
    """
    system = get_plugin_system()
    registry = system.ensure_loaded()
    entry = registry.entry(op_name)
    if entry is None:
        close = difflib.get_close_matches(op_name, list(registry.operators), n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise AttributeError(
            f"no operator named {op_name!r} is registered.{hint}{system.missing_operator_hint()}"
        )
    return entry


def resolve_schema(op_name: str) -> OpSchema:
    """The schema of operator ``op_name`` (see :func:`resolve_operator`)."""
    return resolve_operator(op_name).schema


def place(entry: OperatorEntry, requested: str | None, nodes: Sequence[DataNode]) -> str:
    """The device of a new operator: the requested one, else ``gpu`` when an input is there.

    Raises:
        ValueError: the device is unknown or has no registered kernel (naming those that have;
            for ``gpu``/``mixed`` outside a pipeline or in a CPU-only one, the build says it).
        DevicePlacementError: a cpu/mixed operator is given a GPU input, or a gpu operator a
            CPU one (a ValueError and, as in DALI, a RuntimeError).
    """
    op_name = entry.schema.name
    device = requested
    if device is None:
        device = "gpu" if any(n.device == "gpu" for n in nodes) else "cpu"
    if device not in DEVICES:
        raise ValueError(f"{op_name}: unknown device {device!r}; expected cpu, mixed or gpu")
    if device == "cpu" or device in entry.kernels or not _build_decides():
        entry.check_device(device)
    for index, node in enumerate(nodes):
        if device in ("cpu", "mixed") and node.device == "gpu":
            raise DevicePlacementError(
                f"The input {index} for {device} operator `{op_name}` is stored on incompatible "
                f'device "gpu". Valid device is "cpu". (input {index} is {node.name!r}, stored on '
                "incompatible device gpu; call .cpu() on it or run the operator on the gpu)"
            )
        if device == "gpu" and node.device == "cpu":
            raise DevicePlacementError(
                f"The input {index} for gpu operator `{op_name}` is stored on incompatible device "
                f'"cpu". Valid device is "gpu". (input {index} is {node.name!r}, stored on '
                "incompatible device cpu; call .gpu() on it or run the operator on the cpu)"
            )
    return device


def _build_decides() -> bool:
    """Whether a missing ``gpu``/``mixed`` kernel is left for the build to report: for an
    operator defined outside any pipeline, or in a CPU-only one (``device_id=None``), where
    the build first fails as DALI's does ("The pipeline requires a CUDA-capable GPU", a
    RuntimeError). In a pipeline with a device, the call is refused at once."""
    from feedline.core.graph.nodes import Graph  # nodes builds on this module

    graph = Graph.current()
    owner = None if graph is None else graph.owner
    return owner is None or getattr(owner, "device_id", 0) is None


def is_host_source(entry: OperatorEntry, requested: str | None, nodes: Sequence[DataNode]) -> bool:
    """Whether a source (no positional inputs) asked for on the GPU runs on the CPU followed by
    a copy to the GPU: it has a ``cpu`` kernel and no ``gpu`` one (``external_source`` and
    ``constant`` with ``device="gpu"``; the data is produced on the host anyway)."""
    return (
        requested == "gpu"
        and not nodes
        and "gpu" not in entry.kernels
        and "cpu" in entry.kernels
        and TRANSFER_TO_GPU.name != entry.schema.name
    )
