"""The registry: operators, their kernels per device, image codecs, iterators and graph passes.

A registry is an object (never module globals). Plugins fill it through the hooks in
:mod:`feedline.core.hookspecs`; everything else reads it through read-only views. The devices an
operator runs on are exactly those with a registered kernel, each recorded with the plugin that
registered it, so one plugin can add a ``gpu`` kernel to an operator that another one owns.

The core owns two operators itself, the CPU/GPU transfers that ``DataNode.gpu()`` and
``DataNode.cpu()`` insert; they have no kernel until a plugin adds one (``add_kernel``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from feedline.core.errors import UnsupportedDeviceError
from feedline.core.schema import OpSchema

__all__ = [
    "CORE_OPERATORS",
    "DEVICES",
    "TRANSFER_TO_CPU",
    "TRANSFER_TO_GPU",
    "CodecEntry",
    "KernelEntry",
    "OperatorEntry",
    "Registry",
    "load_object",
]

DEVICES = ("cpu", "mixed", "gpu")
"""Every device a kernel can be registered for, in stage order."""

CORE_OWNER = "feedline.core"
TRANSFER_TO_GPU = OpSchema(
    "_transfer_to_gpu", "Copy a CPU batch to the GPU.", outputs=("output",), hidden=True
)
TRANSFER_TO_CPU = OpSchema(
    "_transfer_to_cpu", "Copy a GPU batch to the CPU.", outputs=("output",), hidden=True
)
CORE_OPERATORS = {s.name: s for s in (TRANSFER_TO_GPU, TRANSFER_TO_CPU)}
"""Operators the core defines (the transfers): plugins only add their kernels."""


def load_object(ref: str | Any) -> Any:
    """Import ``"package.module:attr"`` (or return ``ref`` itself if it is not a string)."""
    if not isinstance(ref, str):
        return ref
    module_name, sep, attr = ref.partition(":")
    if not sep or not attr:
        raise ValueError(f"expected 'module:attribute', got {ref!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class KernelEntry:
    """One kernel of an operator: its device, its ``"module:attr"`` reference (or class) and the
    plugin that registered it."""

    device: str
    kernel: str | type
    owner: str


@dataclass
class OperatorEntry:
    """A registered operator: its schema, kernels by device and who registered what."""

    schema: OpSchema
    owner: str
    kernels: dict[str, str | type] = field(default_factory=dict)
    kernel_owners: dict[str, str] = field(default_factory=dict)

    @property
    def devices(self) -> tuple[str, ...]:
        """The devices with a registered kernel, in stage order (cpu, mixed, gpu)."""
        return tuple(d for d in DEVICES if d in self.kernels)

    @property
    def kernel_entries(self) -> tuple[KernelEntry, ...]:
        """Every kernel with its device and providing plugin, in stage order."""
        return tuple(KernelEntry(d, self.kernels[d], self.kernel_owners[d]) for d in self.devices)

    def docstring(self) -> str:
        """The generated docs, listing each device and the plugin that provides its kernel."""
        return self.schema.docstring({k.device: k.owner for k in self.kernel_entries})

    def check_device(self, device: str) -> None:
        """Raise :class:`UnsupportedDeviceError`, naming the available devices, if ``device``
        has no kernel."""
        if device not in self.kernels:
            available = ", ".join(self.devices) or "none"
            raise UnsupportedDeviceError(
                f"operator {self.schema.name!r} has no {device!r} kernel registered "
                f"(available: {available})"
            )

    def kernel_class(self, device: str) -> Callable[..., Any]:
        """Import and return the kernel class (or factory) for ``device``."""
        self.check_device(device)
        return load_object(self.kernels[device])


@dataclass(frozen=True)
class CodecEntry:
    """An image codec: the file signatures it claims and its decoder object reference."""

    name: str
    signatures: tuple[bytes | Callable[[bytes], bool], ...]
    decoder: str | Any
    owner: str
    priority: int = 0

    def matches(self, head: bytes) -> bool:
        """Whether a file starting with ``head`` belongs to this codec."""
        return any(sig(head) if callable(sig) else head.startswith(sig) for sig in self.signatures)


class Registry:
    """Holds what plugins provide. Duplicate names raise unless ``override=True``."""

    def __init__(self) -> None:
        self._operators: dict[str, OperatorEntry] = {}
        self._codecs: dict[str, CodecEntry] = {}
        #: The codecs by descending priority (registration order among equals); built on demand.
        self._codec_order: tuple[CodecEntry, ...] | None = None
        self._iterators: dict[str, tuple[str | Any, str]] = {}
        self._graph_passes: dict[str, tuple[str | Callable[..., Any], str]] = {}
        self.current_owner = "<code>"

    def add_operator(
        self,
        schema: OpSchema,
        kernels: Mapping[str, str | type] | None = None,
        *,
        override: bool = False,
        owner: str | None = None,
    ) -> None:
        """Register an operator schema with its kernels (device → ``"module:attr"`` or class).

        Raises:
            ValueError: the name is taken (naming both owners, the core included) and
                ``override`` is False, or a kernel's device is unknown.
        """
        owner = owner or self.current_owner
        if schema.name in CORE_OPERATORS:
            raise ValueError(
                f"operator {schema.name!r} is defined by {CORE_OWNER}; {owner!r} may only add "
                "kernels to it (add_kernel)"
            )
        existing = self._operators.get(schema.name)
        if existing is not None and not override:
            raise ValueError(
                f"operator {schema.name!r} is registered by {existing.owner!r} and again by "
                f"{owner!r}; pass override=True to replace it"
            )
        entry = OperatorEntry(schema, owner)
        self._operators[schema.name] = entry
        for device, ref in (kernels or {}).items():
            self.add_kernel(schema.name, device, ref, owner=owner)

    def add_alias(self, name: str, current: str, doc: str, *, owner: str | None = None) -> None:
        """Register ``name`` as a second name of the registered operator ``current``: its schema
        under ``name`` with the docstring ``doc``, sharing its kernels (also those another plugin
        adds to ``current`` later, such as a GPU kernel).

        Raises:
            ValueError: ``current`` is not registered, or ``name`` is taken.
        """
        owner = owner or self.current_owner
        entry = self._operators.get(current)
        if entry is None:
            raise ValueError(f"cannot alias unknown operator {current!r} as {name!r}")
        existing = self._operators.get(name)
        if existing is not None:
            raise ValueError(
                f"operator {name!r} is registered by {existing.owner!r}; {owner!r} cannot make "
                f"it a second name of {current!r}"
            )
        schema = replace(entry.schema, name=name, doc=doc)
        self._operators[name] = OperatorEntry(schema, owner, entry.kernels, entry.kernel_owners)

    def add_kernel(
        self,
        op_name: str,
        device: str,
        kernel: str | type,
        *,
        override: bool = False,
        owner: str | None = None,
    ) -> None:
        """Add a kernel for ``device`` to an operator registered earlier (by any plugin) or to
        one of the :data:`CORE_OPERATORS`; the operator then runs on ``device``."""
        owner = owner or self.current_owner
        if device not in DEVICES:
            raise ValueError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)}")
        entry = self.entry(op_name)
        if entry is None:
            raise ValueError(f"cannot add a {device} kernel to unknown operator {op_name!r}")
        self._operators[op_name] = entry
        if device in entry.kernels and not override:
            raise ValueError(
                f"operator {op_name!r} already has a {device} kernel from "
                f"{entry.kernel_owners[device]!r}; {owner!r} passed another (use override=True)"
            )
        entry.kernels[device] = kernel
        entry.kernel_owners[device] = owner

    def add_codec(
        self,
        name: str,
        signatures: tuple[bytes | Callable[[bytes], bool], ...],
        decoder: str | Any,
        *,
        priority: int = 0,
        override: bool = False,
        owner: str | None = None,
    ) -> None:
        """Register an image codec claiming files that match one of ``signatures``.

        A signature is a byte prefix or a predicate over the file's first bytes (at least 32).
        """
        owner = owner or self.current_owner
        if name in self._codecs and not override:
            raise ValueError(
                f"codec {name!r} is registered by {self._codecs[name].owner!r} and again by "
                f"{owner!r}; pass override=True to replace it"
            )
        if not signatures or not all(
            callable(s) or (isinstance(s, bytes) and s) for s in signatures
        ):
            raise ValueError(f"codec {name!r}: signatures must be non-empty bytes or predicates")
        self._codecs[name] = CodecEntry(name, tuple(signatures), decoder, owner, priority)
        self._codec_order = None

    def add_iterator(
        self, name: str, iterator: str | Any, *, override: bool = False, owner: str | None = None
    ) -> None:
        """Register a framework iterator class under ``name`` (e.g. ``"pytorch"``)."""
        owner = owner or self.current_owner
        if name in self._iterators and not override:
            raise ValueError(
                f"iterator {name!r} is registered by {self._iterators[name][1]!r} and again by "
                f"{owner!r}; pass override=True to replace it"
            )
        self._iterators[name] = (iterator, owner)

    def add_graph_pass(
        self,
        name: str,
        graph_pass: str | Callable[..., Any],
        *,
        override: bool = False,
        owner: str | None = None,
    ) -> None:
        """Register a graph rewrite run at ``Pipeline.build()``, after pruning.

        A pass is called as ``graph_pass(ops, outputs)`` with the pruned operators
        (:class:`~feedline.core.graph.OpNode`, in topological order) and the pipeline's output
        :class:`~feedline.core.graph.DataNode` objects, and returns the new operator list. It may
        replace operators (keeping output DataNode objects, re-pointing their ``source``) but must
        not change what the outputs compute.
        """
        owner = owner or self.current_owner
        if name in self._graph_passes and not override:
            raise ValueError(
                f"graph pass {name!r} is registered by {self._graph_passes[name][1]!r} and again "
                f"by {owner!r}; pass override=True to replace it"
            )
        self._graph_passes[name] = (graph_pass, owner)

    @property
    def operators(self) -> Mapping[str, OperatorEntry]:
        """Registered operators by name (read-only; a core operator once it has a kernel)."""
        return MappingProxyType(self._operators)

    def entry(self, op_name: str) -> OperatorEntry | None:
        """The operator ``op_name``: a registered one, or a core operator (maybe kernel-less)."""
        entry = self._operators.get(op_name)
        if entry is None and op_name in CORE_OPERATORS:
            entry = OperatorEntry(CORE_OPERATORS[op_name], CORE_OWNER)
        return entry

    @property
    def codecs(self) -> Mapping[str, CodecEntry]:
        """Registered codecs by name (read-only)."""
        return MappingProxyType(self._codecs)

    @property
    def iterators(self) -> Mapping[str, tuple[str | Any, str]]:
        """Registered iterators: name → (reference, owner) (read-only)."""
        return MappingProxyType(self._iterators)

    @property
    def graph_passes(self) -> Mapping[str, tuple[str | Callable[..., Any], str]]:
        """Registered graph passes: name → (reference, owner) (read-only)."""
        return MappingProxyType(self._graph_passes)

    def snapshot(self) -> dict[str, Any]:
        """A copy of the registry's content, for :meth:`restore` and :meth:`diff`."""
        return {
            "operators": {
                name: (e.schema, e.owner, dict(e.kernels), dict(e.kernel_owners))
                for name, e in self._operators.items()
            },
            "codecs": dict(self._codecs),
            "iterators": dict(self._iterators),
            "graph_passes": dict(self._graph_passes),
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Undo everything registered since ``snapshot`` was taken."""
        self._operators = {
            name: OperatorEntry(schema, owner, dict(kernels), dict(owners))
            for name, (schema, owner, kernels, owners) in snapshot["operators"].items()
        }
        self._codecs = dict(snapshot["codecs"])
        self._codec_order = None
        self._iterators = dict(snapshot["iterators"])
        self._graph_passes = dict(snapshot["graph_passes"])

    def diff(self, snapshot: Mapping[str, Any]) -> dict[str, list[str]]:
        """Names registered since ``snapshot``: operators, kernels (``op:device``), codecs…"""
        before_ops = snapshot["operators"]
        kernels = [
            f"{name}:{device}"
            for name, entry in self._operators.items()
            for device in entry.kernels
            if name not in before_ops or device not in before_ops[name][2]
        ]
        return {
            "operators": [
                n for n in self._operators if n not in before_ops and n not in CORE_OPERATORS
            ],
            "kernels": kernels,
            "codecs": [n for n in self._codecs if n not in snapshot["codecs"]],
            "iterators": [n for n in self._iterators if n not in snapshot["iterators"]],
        }

    def codec_for(self, head: bytes) -> CodecEntry | None:
        """The highest-priority codec whose signature starts ``head``."""
        order = self._codec_order
        if order is None:
            order = tuple(sorted(self._codecs.values(), key=lambda c: -c.priority))
            self._codec_order = order
        return next((c for c in order if c.matches(head)), None)
