"""Operator schemas: what an operator computes and accepts, how a call is validated, its docs.

A schema says nothing about where an operator runs: the devices are those that plugins register
kernels for (:class:`~feedline.core.registry.OperatorEntry`), and the generated docs are given
them by the caller. The arguments' specification (:class:`ArgSpec`, :data:`REQUIRED`) lives in
:mod:`feedline.core.arguments` and is importable from here too.
"""

from __future__ import annotations

import difflib
import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from feedline.core.arguments import (
    COMMON_ARGS,
    ON_ERROR_POLICIES,
    REQUIRED,
    ArgSpec,
    ArgumentRankError,
    MissingArgumentError,
    UnknownArgumentError,
    unknown_argument,
)
from feedline.core.types import ScalarConstant

__all__ = [
    "COMMON_ARGS",
    "ON_ERROR_POLICIES",
    "REQUIRED",
    "ArgSpec",
    "ArgumentRankError",
    "InputSpec",
    "MissingArgumentError",
    "OpSchema",
    "UnknownArgumentError",
    "unknown_argument",
]


@dataclass(frozen=True)
class InputSpec:
    """One positional input of an operator."""

    name: str
    doc: str = ""
    layouts: tuple[str, ...] | None = None
    optional: bool = False
    variadic: bool = False

    def doc_line(self) -> str:
        """The Google-style docstring entry for this input."""
        layouts = ""
        if self.layouts is not None:
            shown = ", ".join(repr(x) if x else "'' (none)" for x in self.layouts)
            layouts = f" Layouts: {shown}."
        flag = ", optional" if self.optional else ""
        many = "*" if self.variadic else ""
        return f"{many}{self.name} (TensorList{flag}): {self.doc}{layouts}".rstrip()


@dataclass(frozen=True)
class OpSchema:
    """What an operator accepts and produces.

    Attributes:
        name: dotted name (``"resize"``, ``"readers.file"``), the path under ``fn``.
        doc: the operator's description (first line = summary).
        inputs: positional inputs.
        outputs: output names, or a function of the resolved arguments (and optionally the
            keyword ``num_inputs``) returning them.
        args: keyword arguments (``name``, ``device``, ``preserve``, ``seed`` and ``on_error`` are
            implicit).
        deprecated: old argument name → new name.
        removed: arguments DALI no longer uses: accepted with its DeprecationWarning, dropped.
        no_prune: never prune the operator, even when its outputs are unused.
        serializable: whether pipelines using it can be serialized.
        hidden: left out of ``dir(fn)`` (internal operators such as arithmetic).
        output_dict: the ``fn`` call returns ``{output name: DataNode}`` instead of a list (as
            DALI's ``readers.tfrecord`` does).
        output_list: given the validated static arguments, whether the ``fn`` call returns a
            list even for a single output (DALI's ``external_source`` whenever ``num_outputs``
            is given); None: one output is returned bare.
        random: whether the operator draws random numbers (or shuffles). When False, a ``seed``
            argument is ignored with DALI's DeprecationWarning.
        positional_args: arguments that may also be given positionally, in this order (DALI's
            ``external_source(source)``); only for operators without inputs.
        check: called with the validated static arguments when the operator is called, to
            raise on combinations the argument types cannot express (as DALI does at that
            point).
        input_sets: whether lists of DataNodes as inputs make one operator per position
            (DALI's multiple input sets); DALI's Python operators refuse them.
        debug_unused: arguments that have no effect in debug mode (DALI's debug-mode
            ``external_source`` runs its source in the calling process): there these and any
            unknown argument are dropped with a warning, as DALI ignores them. None: debug
            mode validates the call as any other.
    """

    name: str
    doc: str
    inputs: tuple[InputSpec, ...] = ()
    outputs: tuple[str, ...] | Callable[[Mapping[str, Any]], tuple[str, ...]] = ("output",)
    args: tuple[ArgSpec, ...] = ()
    deprecated: Mapping[str, str] = field(default_factory=dict)
    removed: tuple[str, ...] = ()
    no_prune: bool = False
    serializable: bool = True
    hidden: bool = False
    output_dict: bool = False
    output_list: Callable[[Mapping[str, Any]], bool] | None = None
    random: bool = True
    positional_args: tuple[str, ...] = ()
    check: Callable[[Mapping[str, Any]], None] | None = None
    input_sets: bool = True
    debug_unused: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        names = [a.name for a in self.args]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            raise ValueError(f"schema {self.name!r} declares {sorted(duplicates)} twice")
        reserved = set(names) & set(COMMON_ARGS)
        if reserved:
            raise ValueError(f"schema {self.name!r}: {sorted(reserved)} are implicit arguments")
        for old, new in self.deprecated.items():
            if new not in names:
                raise ValueError(f"schema {self.name!r}: alias {old!r} points to unknown {new!r}")
        if self.positional_args and (self.inputs or not set(self.positional_args) <= set(names)):
            raise ValueError(
                f"schema {self.name!r}: positional_args must name arguments of an operator "
                "without inputs"
            )

    @property
    def arg_map(self) -> dict[str, ArgSpec]:
        """Arguments by name."""
        return {a.name: a for a in self.args}

    @property
    def min_inputs(self) -> int:
        """Number of inputs that must be given."""
        return sum(1 for i in self.inputs if not i.optional and not i.variadic)

    @property
    def max_inputs(self) -> int | None:
        """Maximum number of inputs (None when the last input is variadic)."""
        if self.inputs and self.inputs[-1].variadic:
            return None
        return len(self.inputs)

    def output_names(
        self, args: Mapping[str, Any], num_inputs: int | None = None
    ) -> tuple[str, ...]:
        """The output names for resolved arguments ``args`` (and the number of inputs given).

        A callable ``outputs`` receives ``num_inputs`` as a keyword when it declares it.
        """
        if not callable(self.outputs):
            return tuple(self.outputs)
        if num_inputs is not None and "num_inputs" in inspect.signature(self.outputs).parameters:
            return tuple(self.outputs(args, num_inputs=num_inputs))
        return tuple(self.outputs(args))

    def closest(self, name: str) -> list[str]:
        """The valid argument names closest to ``name``."""
        valid = [*self.arg_map, *self.deprecated, *self.removed, *COMMON_ARGS]
        return difflib.get_close_matches(name, valid, n=3, cutoff=0.5)

    def check_num_inputs(self, count: int) -> None:
        """Raise TypeError if ``count`` positional inputs is not acceptable."""
        high = self.max_inputs
        if count < self.min_inputs or (high is not None and count > high):
            expected = (
                f"{self.min_inputs}"
                if high == self.min_inputs
                else (
                    f"{self.min_inputs} to {high}"
                    if high is not None
                    else f"at least {self.min_inputs}"
                )
            )
            raise TypeError(f"{self.name}: expected {expected} input(s), got {count}")

    def bind_positional(
        self, inputs: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> tuple[Sequence[Any], dict[str, Any]]:
        """Move positional values that stand for :attr:`positional_args` into the keywords.

        Raises:
            TypeError: more positional values than such arguments, or one also given by name.
        """
        kwargs = dict(kwargs)
        if not self.positional_args or not inputs:
            return inputs, kwargs
        if len(inputs) > len(self.positional_args):
            raise TypeError(
                f"{self.name}: takes at most {len(self.positional_args)} positional argument(s) "
                f"({', '.join(self.positional_args)}), got {len(inputs)}"
            )
        for name, value in zip(self.positional_args, inputs, strict=False):
            if name in kwargs:
                raise TypeError(f"{self.name}: got multiple values for argument {name!r}")
            kwargs[name] = value
        return (), kwargs

    def rename_deprecated(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Rename deprecated aliases and drop removed arguments, with DALI's DeprecationWarning
        texts; an alias given with its new name is DALI's TypeError."""
        result = dict(kwargs)
        for old, new in self.deprecated.items():
            if old in result:
                if new in result:
                    raise TypeError(
                        f"Operator `{self.name}` got an unexpected '{old}' deprecated argument "
                        f"when '{new}' was already provided"
                    )
                warnings.warn(
                    f"The argument `{old}` is a deprecated alias for `{new}`. Use `{new}` instead.",
                    DeprecationWarning,
                    stacklevel=4,
                )
                result[new] = result.pop(old)
        for old in (name for name in self.removed if name in result):
            del result[old]
            warnings.warn(
                f"The argument `{old}` is no longer used and will be removed in a future release.",
                DeprecationWarning,
                stacklevel=4,
            )
        return result

    def validate(
        self, kwargs: Mapping[str, Any], is_node: Callable[[Any], bool] = lambda _: False
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate keyword arguments of a call.

        Args:
            kwargs: the call's keyword arguments (without the implicit common arguments).
            is_node: tells whether a value is a graph node (a per-sample argument input).

        Returns:
            ``(static, tensor)``: validated static values with defaults filled in (an argument
            given as None gets its default, as in DALI), and the per-sample arguments given as
            nodes.

        Raises:
            TypeError: unknown argument (with the closest names), wrong type, missing required
                argument, or a node given for an argument that is not per-sample.
        """
        kwargs = self.rename_deprecated(kwargs)
        arg_map = self.arg_map
        static: dict[str, Any] = {}
        tensor: dict[str, Any] = {}
        for key, value in kwargs.items():
            spec = arg_map.get(key)
            if spec is None:
                raise unknown_argument(self.name, key, self.closest(key))
            if value is None:
                continue  # as in DALI, None means "not given": the default applies
            if isinstance(value, ScalarConstant):
                value = value.value  # as in DALI, a scalar constant argument is its value
            if is_node(value):
                if not spec.tensor:
                    raise TypeError(
                        f"{self.name}: argument {key!r} cannot be given per sample (a DataNode); "
                        "pass a constant value"
                    )
                tensor[key] = value
            else:
                static[key] = spec.coerce(value, self.name)
        for spec in self.args:
            if spec.name in static or spec.name in tensor:
                continue
            if spec.required:
                raise MissingArgumentError(  # with DALI's sentence
                    f"{self.name}: missing required argument {spec.name!r}; not all required "
                    f'arguments were specified for op "{self.name}"'
                )
            static[spec.name] = spec.default
        if self.check is not None:
            self.check(static)
        return static, tensor

    def docstring(self, providers: Mapping[str, str] | None = None) -> str:
        """The Google-style docstring of the generated ``fn`` function.

        Args:
            providers: device → the plugin that registered its kernel, listed as the supported
                devices (omitted when None).
        """
        lines = [inspect.cleandoc(self.doc), ""]
        device_doc = "where to run it."
        if providers is not None:
            listed = ", ".join(f"``{d}`` ({owner})" for d, owner in providers.items()) or "none"
            lines += [f"Supported devices: {listed}.", ""]
            device_doc = f"where to run it, one of {', '.join(providers) or 'none'}."
        if self.inputs:
            lines.append("Args:")
            lines += [f"    {i.doc_line()}" for i in self.inputs]
            lines.append("")
        lines.append("Keyword Args:")
        lines += [f"    {a.doc_line()}" for a in self.args]
        lines += [
            "    name (str, optional): unique name of this operator in the pipeline.",
            f"    device (str, optional): {device_doc}",
            "    preserve (bool, default False): keep the operator even if its outputs are unused.",
            "    seed (int, optional): random seed of this operator (derived from the pipeline's).",
            "    on_error (str, optional): ``raise`` or ``skip``: what a failing sample of this "
            "operator does (the pipeline's ``on_error`` when omitted; ``skip`` replaces the "
            "sample by the next one from its reader).",
        ]
        if self.deprecated:
            lines += ["", "Deprecated aliases:"]
            lines += [f"    {old} → {new}" for old, new in self.deprecated.items()]
        if self.removed:
            lines += ["", f"No longer used (ignored, with a warning): {', '.join(self.removed)}."]
        lines += ["", "Returns:"]
        if callable(self.outputs):
            lines.append(
                "    DataNode or list of DataNode: the outputs (they depend on arguments)."
            )
        elif len(self.outputs) == 1:
            lines.append(f"    DataNode: {self.outputs[0]}.")
        else:
            lines.append(f"    list of DataNode: {', '.join(self.outputs)}.")
        return "\n".join(lines)

    def signature(self) -> inspect.Signature:
        """The ``inspect.Signature`` of the generated ``fn`` function."""
        params = []
        kind_pos = inspect.Parameter.POSITIONAL_ONLY
        for spec in self.inputs:
            if spec.variadic:
                params.append(inspect.Parameter(spec.name, inspect.Parameter.VAR_POSITIONAL))
            else:
                default = None if spec.optional else inspect.Parameter.empty
                params.append(inspect.Parameter(spec.name, kind_pos, default=default))
        keyword = inspect.Parameter.KEYWORD_ONLY
        leading = [a for a in self.args if a.name in self.positional_args]
        leading.sort(key=lambda a: self.positional_args.index(a.name))
        for arg in [*leading, *(a for a in self.args if a not in leading)]:
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if arg in leading else keyword
            default = inspect.Parameter.empty if arg.required else arg.default
            params.append(inspect.Parameter(arg.name, kind, default=default))
        for common, default in (
            ("name", None),
            ("device", None),
            ("preserve", False),
            ("seed", None),
            ("on_error", None),
        ):
            params.append(inspect.Parameter(common, keyword, default=default))
        return inspect.Signature(params)
