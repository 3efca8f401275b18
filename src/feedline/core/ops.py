"""The ``ops`` namespace: DALI's object API, one class per registered operator.

Part of the core's top layer (beside ``fn`` and the pipeline), generated from the same registry
and schemas as ``fn``: ``ops.readers.File`` is the operator ``fn.readers.file``, named by DALI's
CamelCase rule (:func:`~feedline.core.names.class_name`). An instance holds arguments;
calling it adds one operator node, exactly as the ``fn`` call with the merged arguments would::

    decode = ops.decoders.Image(device="cpu")      # arguments fixed at construction
    images = decode(jpegs)                         # one node per call
    flipped = ops.Flip()(images, horizontal=coin)  # arguments (and DataNodes) at call

As in DALI, an argument given at construction cannot be given again at call (``None`` at call
leaves it as it is), and every call creates a new operator with its own state: a reader object
called twice is two readers, each reading the whole data set with its own seed and position.
"""

from __future__ import annotations

import inspect
import types as _pytypes
from collections.abc import Sequence
from typing import Any, ClassVar

from feedline.core.graph import DataNode, make_operator_call
from feedline.core.host_memory import from_dlpack, to_dlpack
from feedline.core.names import class_name, op_name
from feedline.core.plugins import get_registry
from feedline.core.registry import OperatorEntry
from feedline.core.schema import COMMON_ARGS, unknown_argument

__all__ = ["Compose", "Operator", "OpsNamespace", "operator_class"]

_INIT_POSITIONAL = {
    "external_source": ("source", "num_outputs"),
    "python_function": ("function", "num_outputs"),
}
"""The operators whose DALI class takes leading arguments positionally (DALI's hand-written
``ExternalSource`` and ``PythonFunction``; every generated class is keyword-only)."""


class Operator:
    """Base of the generated operator classes (``ops.Resize``, ``ops.readers.File``…).

    Args:
        device: where the operator runs (``cpu``, ``mixed`` or ``gpu``).
        **kwargs: the operator's arguments, checked against its schema now (a misspelled name
            fails here, with the closest names); ``DataNode`` values are per-sample argument
            inputs. ``None`` means "not given", as in DALI.
    """

    schema_name: ClassVar[str]
    _entry: ClassVar[OperatorEntry]

    def __init__(self, *args: Any, device: str = "cpu", **kwargs: Any) -> None:
        positional = _INIT_POSITIONAL.get(self.schema_name, ())
        if len(args) > len(positional):
            raise TypeError(
                f"{type(self).__name__}() takes keyword arguments only"
                + (f" after {', '.join(positional)}" if positional else "")
                + f", got {len(args)} positional"
            )
        for key, value in zip(positional, args, strict=False):
            if key in kwargs:
                raise TypeError(f"{type(self).__name__}() got {key!r} twice")
            kwargs[key] = value
        self._device = device
        self._init_args = {k: v for k, v in kwargs.items() if v is not None}
        self._check_names(self._init_args)

    @property
    def device(self) -> str:
        """The device the operator runs on."""
        return self._device

    @property
    def schema(self) -> Any:
        """The operator's schema."""
        return self._entry.schema

    @property
    def preserve(self) -> bool:
        """Whether the operator is kept when its outputs are unused."""
        return bool(self._init_args.get("preserve")) or self._entry.schema.no_prune

    def _check_names(self, kwargs: dict[str, Any]) -> None:
        schema = self._entry.schema
        known = {*schema.arg_map, *schema.deprecated, *schema.removed, *COMMON_ARGS}
        for key in kwargs:
            if key not in known:
                raise unknown_argument(schema.name, key, schema.closest(key))

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        """Add the operator to the graph, reading ``inputs``; ``kwargs`` add arguments that were
        not given at construction.

        Returns:
            The output DataNode, or the list of them (as the ``fn`` function).

        Raises:
            ValueError: an argument given both at construction and here (DALI's rule).
            TypeError: an unknown argument, or ``device`` (chosen at construction).
        """
        call_args = {k: v for k, v in kwargs.items() if v is not None}
        if "device" in call_args:
            raise TypeError(
                f"{type(self).__name__}: the device is chosen when the operator is constructed, "
                "not when it is called"
            )
        self._check_names(call_args)
        for key in call_args:
            if key in self._init_args:
                raise ValueError(f"The argument `{key}` was already specified in __init__.")
        merged = {**self._init_args, **call_args, "device": self._device}
        return make_operator_call(self.schema_name, inputs, merged)

    def __repr__(self) -> str:
        return f"{type(self).__module__}.{type(self).__name__}(device={self._device!r})"


_classes: dict[int, tuple[OperatorEntry, type[Operator]]] = {}


def operator_class(entry: OperatorEntry) -> type[Operator]:
    """The ``ops`` class of a registered operator (one class per registry entry, so
    ``ops.Resize is ops.Resize``), with the schema's docs and signatures."""
    cached = _classes.get(id(entry))
    if cached is not None and cached[0] is entry:
        return cached[1]
    schema = entry.schema
    *path, _ = schema.name.split(".")
    module = ".".join(["feedline.ops", *path])
    signature = schema.signature()
    keyword = [p for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
    inputs = [p for p in signature.parameters.values() if p.kind is not p.KEYWORD_ONLY]
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)

    def __init__(self: Operator, *args: Any, **kwargs: Any) -> None:
        Operator.__init__(self, *args, **kwargs)

    def __call__(self: Operator, *args: Any, **kwargs: Any) -> Any:
        return Operator.__call__(self, *args, **kwargs)

    doc = entry.docstring()
    __init__.__doc__ = doc
    __call__.__doc__ = f"Add ``{schema.name}`` to the graph being defined.\n\n{doc}"
    __init__.__signature__ = inspect.Signature([self_param, *keyword])  # type: ignore[attr-defined]
    __call__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [self_param, *inputs, *keyword]
    )
    name = class_name(schema.name)
    cls = type(
        name,
        (Operator,),
        {
            "__init__": __init__,
            "__call__": __call__,
            "__doc__": doc,
            "__module__": module,
            "__qualname__": name,
            "schema_name": schema.name,
            "_entry": entry,
        },
    )
    _classes[id(entry)] = (entry, cls)
    return cls


class Compose:
    """DALI's ``ops.Compose``: several operator objects applied in turn, as one callable.

    The first operator receives the call's inputs and keyword arguments; each next one receives
    the outputs of the one before (copied to the GPU when it runs there).

    Args:
        op_list: the operator objects, in order.
    """

    def __init__(self, op_list: Sequence[Any]) -> None:
        if not op_list:
            raise ValueError("Compose needs at least one operator")
        self._ops = list(op_list)

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        """The outputs of the last operator."""
        result = self._ops[0](*inputs, **kwargs)
        for op in self._ops[1:]:
            nodes = result if isinstance(result, list) else [result]
            if getattr(op, "device", "cpu") == "gpu":
                nodes = [n.gpu() if isinstance(n, DataNode) else n for n in nodes]
            result = op(*nodes)
        return result


_ROOT_EXTRAS: dict[str, Any] = {
    "Compose": Compose,
    "_DataNode": DataNode,
    "_dlpack_from_array": to_dlpack,
    "_dlpack_to_array": from_dlpack,
    "_op_name": op_name,
}
"""What ``ops`` holds besides the operator classes: ``Compose`` and the private names of DALI's
``nvidia.dali.ops`` that DALI programs and tests import (its ``DataNode`` alias, the DLPack
helpers that ``DLTensorPythonFunction`` functions use and ``_op_name``, a schema name's ``fn`` or
``ops`` name)."""


class OpsNamespace(_pytypes.ModuleType):
    """A (sub-)namespace of ``ops``; attributes resolve against the active registry."""

    def __init__(self, prefix: str = "") -> None:
        super().__init__(f"feedline.ops{'.' + prefix if prefix else ''}")
        self._prefix = prefix
        self.__doc__ = __doc__ if not prefix else f"Operator classes under ``ops.{prefix}``."
        self.__path__: list[str] = []  # a package, so ``import feedline.ops.transforms`` works

    def _names(self) -> tuple[dict[str, OperatorEntry], set[str]]:
        prefix = f"{self._prefix}." if self._prefix else ""
        classes: dict[str, OperatorEntry] = {}
        subspaces: set[str] = set()
        for name, entry in get_registry().operators.items():
            if not name.startswith(prefix):
                continue
            head, dot, _ = name[len(prefix) :].partition(".")
            if dot:
                if not entry.schema.hidden:
                    subspaces.add(head)
            else:
                classes[class_name(name)] = entry
        return classes, subspaces

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if not self._prefix and attr in _ROOT_EXTRAS:
            return _ROOT_EXTRAS[attr]
        classes, subspaces = self._names()
        if attr in classes:
            return operator_class(classes[attr])
        full = f"{self._prefix}.{attr}" if self._prefix else attr
        if attr in subspaces or any(n.startswith(full + ".") for n in get_registry().operators):
            return OpsNamespace(full)
        raise AttributeError(f"module {self.__name__!r} has no operator class {attr!r}")

    def __dir__(self) -> list[str]:
        classes, subspaces = self._names()
        visible = {name for name, entry in classes.items() if not entry.schema.hidden}
        return sorted(visible | subspaces | ({"Compose"} if not self._prefix else set()))
