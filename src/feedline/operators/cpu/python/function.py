"""Python code as operators: ``fn.python_function`` and the :func:`operator` decorator.

``fn.python_function(*inputs, function=f, num_outputs=1, batch_processing=False)`` runs ``f``
in the pipeline. Per sample (the default) it is mapped over the batch on the pipeline's thread
pool, in parallel (DALI runs it serially on the main thread); with ``batch_processing=True`` it is
called once per batch with one list of arrays per input. Its inputs are writable NumPy arrays of
its own (copies: the function may write into them, as DALI code does, without changing what other
operators see). Functions made with :func:`operator` get read-only views instead.

:func:`operator` turns one annotated function into a full operator with its own schema, so it is
used as ``fn.<name>(...)`` with validated keyword arguments, per-sample arguments and generated
docs::

    from feedline.operators.cpu.python.function import operator

    @operator(name="my_team.add_noise", per_sample=("sigma",))
    def add_noise(image, *, sigma: float = 5.0, rng) -> np.ndarray:
        \"\"\"Add Gaussian noise.

        Args:
            image: uint8 HWC image.
            sigma: noise standard deviation.
        \"\"\"
        noisy = image + rng.normal(0.0, sigma, image.shape)
        return np.clip(noisy, 0, 255).astype(np.uint8)

Positional parameters are inputs (default ``None`` = optional input, ``*inputs`` = variadic);
keyword-only parameters are arguments whose kind comes from the annotation (``bool``, ``int``,
``float``, ``str``, ``tuple[int, ...]``/``list[float]``…, ``DataType``, ``InterpType``,
``ImageType``; anything else is passed as is) and whose default comes from the signature (none =
required). Two keyword-only names are reserved: ``rng`` receives the sample's random generator
(a list of them with ``batch=True``) and ``sample`` the :class:`SampleContext`.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel, KernelContext, SampleContext, SampleKernel
from feedline.core.schema import REQUIRED, ArgSpec, InputSpec, OpSchema
from feedline.core.tensor import TensorListCPU
from feedline.core.types import DataType, ImageType, InterpType
from feedline.operators.cpu.python.outputs import as_output, batch_results, split_outputs
from feedline.operators.cpu.python.schemas import python_function_outputs

__all__ = [
    "PythonFunctionBatchKernel",
    "PythonFunctionKernel",
    "PythonFunctionSetup",
    "PythonOperator",
    "function_name",
    "operator",
    "python_function_kernel",
]

_RESERVED = ("rng", "sample")
_SCALAR_KINDS: dict[Any, str] = {
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    DataType: "dtype",
    InterpType: "interp",
    ImageType: "image_type",
    dict: "dict",
}
_VEC_KINDS = {bool: "bool_vec", int: "int_vec", float: "float_vec", str: "str_vec"}


def _padded_layouts(layouts: Sequence[str] | None, count: int) -> tuple[str, ...]:
    given = tuple(layouts or ())
    if len(given) > count:
        raise ValueError(f"output_layouts names {len(given)} layouts for {count} outputs")
    return given + ("",) * (count - len(given))


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def _private_copy(array: np.ndarray) -> np.ndarray:
    return np.array(array, copy=True)


def function_name(function: Callable[..., Any]) -> str:
    """How messages name a user's function."""
    return f"python function {getattr(function, '__qualname__', repr(function))!r}"


class PythonFunctionSetup(Kernel):
    """Settings shared by the ``python_function`` and ``dl_tensor_python_function`` kernels:
    ``num_outputs``, the padded ``layouts`` and the function's name for messages (``who``)."""

    def setup(self) -> None:
        self.num_outputs = len(python_function_outputs(self.args))
        given = self.args["output_layouts"] or ()
        if isinstance(given, str):  # one layout string names every output's layout, as in DALI
            given = (given,) * self.num_outputs
        if len(given) > self.num_outputs:
            raise RuntimeError(  # DALI's type and wording, at build as in DALI
                f"{self.ctx.schema.name}: The length of the ``output_layouts`` (={len(given)}) is "
                f"greater than the number of outputs (={self.num_outputs})."
            )
        self.layouts = _padded_layouts(given, self.num_outputs)
        self.who = function_name(self.args["function"])


class PythonFunctionKernel(PythonFunctionSetup, SampleKernel):
    """``python_function`` per sample: ``function(*sample_inputs)``."""

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        return self.layouts

    def run_sample(
        self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
    ) -> tuple[np.ndarray, ...]:
        result = args["function"](*(_private_copy(a) for a in inputs))
        outputs = split_outputs(result, self.num_outputs, self.who)
        return tuple(
            as_output(value, self.who, i, self.layouts[i]) for i, value in enumerate(outputs)
        )


class PythonFunctionBatchKernel(PythonFunctionSetup):
    """``python_function`` with ``batch_processing=True``: ``function(*input_lists)``."""

    def run(self, batch: Batch) -> list[TensorListCPU]:
        lists = [[_private_copy(a) for a in tl.samples()] for tl in batch.inputs]
        result = self.args["function"](*lists)
        return batch_results(result, batch, self.num_outputs, self.layouts, self.who)


def python_function_kernel(ctx: KernelContext) -> Kernel:
    """The kernel factory registered for ``python_function``: the per-sample or the batch kernel,
    chosen by ``batch_processing``."""
    cls = PythonFunctionBatchKernel if ctx.args["batch_processing"] else PythonFunctionKernel
    return cls(ctx)


# ---------------------------------------------------------------------------------------------
# The @operator decorator
# ---------------------------------------------------------------------------------------------


def _kind_of(annotation: Any) -> tuple[str, bool]:
    """(ArgSpec kind, whether None is allowed) for a parameter annotation."""
    if annotation is inspect.Parameter.empty:
        return "any", False
    origin = typing.get_origin(annotation)
    members = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        rest = [m for m in members if m is not type(None)]
        if len(rest) == 1:
            return _kind_of(rest[0])[0], len(rest) < len(members)
        return "any", type(None) in members
    if annotation in _SCALAR_KINDS:
        return _SCALAR_KINDS[annotation], False
    if origin in (tuple, list, Sequence) and members:
        element = members[0]
        if all(m in (element, Ellipsis) for m in members) and element in _VEC_KINDS:
            return _VEC_KINDS[element], False
    if origin is dict or annotation is Mapping:
        return "dict", False
    if origin is Callable or annotation is Callable:
        return "callable", False
    return "any", False


def _docstring_sections(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and ``Args:`` entries."""
    text = inspect.cleandoc(doc or "")
    parts = re.split(r"^(?:Args|Arguments|Keyword Args):\s*$", text, maxsplit=1, flags=re.M)
    description = parts[0].strip()
    entries: dict[str, str] = {}
    if len(parts) == 2:
        current = None
        for line in parts[1].splitlines():
            if line and not line.startswith(" "):
                break
            match = re.match(r"^\s{2,8}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
            if match:
                current = match.group(1)
                entries[current] = match.group(2).strip()
            elif current and line.strip():
                entries[current] += " " + line.strip()
    return description, entries


class PythonOperator:
    """An operator defined by one Python function (made by :func:`operator`).

    Attributes:
        function: the decorated function (call it directly to test it on arrays).
        schema: the generated :class:`OpSchema`.
        kernel_class: the generated kernel class.

    Calling the object inside a pipeline definition is the same as calling ``fn.<name>``.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        schema: OpSchema,
        kernel_class: type[Kernel],
    ) -> None:
        self.function = function
        self.schema = schema
        self.kernel_class = kernel_class
        self.__doc__ = schema.docstring()
        self.__name__ = getattr(function, "__name__", schema.name)
        self.__signature__ = schema.signature()

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        from feedline.core.graph import make_operator_call

        return make_operator_call(self.schema.name, inputs, kwargs)

    def register(self, registry: Any, override: bool = False) -> None:
        """Add the operator to ``registry`` (e.g. from a plugin's ``feedline_register_operators``).

        Raises:
            ValueError: the name is taken and ``override`` is False.
        """
        registry.add_operator(
            self.schema,
            kernels={"cpu": self.kernel_class},
            override=override,
            owner=f"@operator {self.function.__module__}.{self.function.__qualname__}",
        )

    def __repr__(self) -> str:
        return f"PythonOperator({self.schema.name!r})"


def _build_schema(
    function: Callable[..., Any],
    name: str,
    doc: str | None,
    num_outputs: int,
    per_sample: Sequence[str],
    no_prune: bool,
) -> tuple[OpSchema, list[str], set[str]]:
    """The schema of a decorated function, its argument names and the reserved names it takes."""
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError):
        hints = {}
    description, entries = _docstring_sections(function.__doc__ or "")
    where = f"@operator({name!r}) on {function.__qualname__}"
    inputs: list[InputSpec] = []
    args: list[ArgSpec] = []
    reserved: set[str] = set()
    for param in signature.parameters.values():
        doc_text = entries.get(param.name, "")
        if param.kind is param.VAR_KEYWORD:
            raise TypeError(f"{where}: **{param.name} is not supported; declare each argument")
        if param.kind is param.VAR_POSITIONAL:
            inputs.append(InputSpec(param.name, doc_text, optional=True, variadic=True))
            continue
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            optional = param.default is None
            if param.default is not param.empty and not optional:
                raise TypeError(f"{where}: input {param.name!r} may only default to None")
            if inputs and inputs[-1].optional and not optional:
                raise TypeError(f"{where}: required input {param.name!r} follows optional ones")
            inputs.append(InputSpec(param.name, doc_text, optional=optional))
            continue
        if param.name in _RESERVED:
            reserved.add(param.name)
            continue
        kind, nullable = _kind_of(hints.get(param.name, param.annotation))
        default = REQUIRED if param.default is param.empty else param.default
        spec = ArgSpec(param.name, kind, default, doc_text, tensor=param.name in per_sample)
        if default is not REQUIRED and default is not None:
            try:
                spec = ArgSpec(param.name, kind, spec.coerce(default, name), doc_text, spec.tensor)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{where}: default of {param.name!r} does not fit: {exc}") from None
        elif default is None and not nullable and kind != "any":
            raise TypeError(f"{where}: {param.name!r} defaults to None; annotate it as Optional")
        args.append(spec)
    arg_names = [a.name for a in args]
    unknown = set(per_sample) - set(arg_names)
    if unknown:
        raise TypeError(f"{where}: per_sample names unknown keyword arguments {sorted(unknown)}")
    for arg in args:
        if arg.tensor and arg.kind in ("callable", "dict", "any", "dtype", "interp", "image_type"):
            raise TypeError(
                f"{where}: argument {arg.name!r} of kind {arg.kind} cannot be per-sample"
            )
    outputs = tuple(f"output_{i}" for i in range(num_outputs)) if num_outputs != 1 else ("output",)
    schema = OpSchema(
        name=name,
        doc=doc or description or f"Python operator {function.__qualname__}.",
        inputs=tuple(inputs),
        outputs=outputs,
        args=tuple(args),
        no_prune=no_prune,
        serializable=False,
    )
    return schema, arg_names, reserved


def _make_kernel_class(
    function: Callable[..., Any],
    name: str,
    arg_names: list[str],
    reserved: set[str],
    num_outputs: int,
    layouts: tuple[str, ...],
    batch: bool,
) -> type[Kernel]:
    who = f"operator {name!r} ({function.__qualname__})"

    def call(inputs: Sequence[Any], args: Mapping[str, Any], extra: Mapping[str, Any]) -> Any:
        return function(*inputs, **{key: args[key] for key in arg_names}, **extra)

    if not batch:

        class DecoratedSampleKernel(SampleKernel):
            def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
                return layouts

            def run_sample(
                self, inputs: tuple[np.ndarray, ...], args: Mapping[str, Any], sample: SampleContext
            ) -> tuple[np.ndarray, ...]:
                extra: dict[str, Any] = {"sample": sample} if "sample" in reserved else {}
                if "rng" in reserved:
                    extra["rng"] = sample.rng
                result = call([_read_only(a) for a in inputs], args, extra)
                outputs = split_outputs(result, num_outputs, who)
                return tuple(as_output(v, who, i, layouts[i]) for i, v in enumerate(outputs))

        kernel: type[Kernel] = DecoratedSampleKernel
    else:

        class DecoratedBatchKernel(Kernel):
            def run(self, batch: Batch) -> list[TensorListCPU]:
                args = dict(self.args)
                kinds = self.ctx.schema.arg_map
                for key, tl in batch.arg_inputs.items():
                    args[key] = [_per_sample_value(a, kinds[key].kind) for a in tl.samples()]
                lists = [[_read_only(a) for a in tl.samples()] for tl in batch.inputs]
                rngs = [batch.rng(i) for i in range(batch.size)]
                extra = {"rng": rngs} if "rng" in reserved else {}
                return batch_results(call(lists, args, extra), batch, num_outputs, layouts, who)

        kernel = DecoratedBatchKernel
    kernel.__name__ = kernel.__qualname__ = f"{_class_stem(name)}Kernel"
    return kernel


def _per_sample_value(array: np.ndarray, kind: str) -> Any:
    """One sample's value of a per-sample argument, shaped as the argument's kind expects."""
    if kind.endswith("_vec"):
        return tuple(array.ravel().tolist())
    if array.size != 1:
        raise ValueError(f"expected a scalar per sample, got shape {array.shape}")
    return array.reshape(()).item()


def _class_stem(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[._\W]+", name) if part)


def operator(
    name: str | None = None,
    *,
    doc: str | None = None,
    num_outputs: int = 1,
    batch: bool = False,
    per_sample: Sequence[str] = (),
    output_layouts: str | Sequence[str] | None = None,
    no_prune: bool = False,
    override: bool = False,
    register: bool = True,
) -> Callable[[Callable[..., Any]], PythonOperator]:
    """Make a full feedline operator (``fn.<name>``) from one Python function.

    Args:
        name: the dotted operator name (``"my_team.blur"``); default: the function's name.
        doc: operator description; default: the function docstring's description. ``Args:``
            entries of the docstring document the inputs and arguments.
        num_outputs: how many arrays the function returns (a tuple when more than one).
        batch: call the function once per batch with lists of samples (arguments given per
            sample arrive as lists too) instead of once per sample on the thread pool.
        per_sample: keyword arguments that may be given per sample as DataNodes.
        output_layouts: layout of each output (a string names the first output's layout).
        no_prune: keep the operator even when its outputs are unused (side effects).
        override: replace an operator already registered under ``name``.
        register: register it now with the active registry (loading the plugins if needed);
            with False, call :meth:`PythonOperator.register` yourself, e.g. from your package's
            ``feedline_register_operators`` hook.

    Returns:
        A decorator producing a :class:`PythonOperator`.

    Raises:
        TypeError: the signature cannot be turned into a schema (the message names the
            parameter), or a default does not match its annotation.
        ValueError: ``name`` is already registered and ``override`` is False.
    """
    if not isinstance(num_outputs, int) or num_outputs < 0:
        raise ValueError(f"num_outputs must be a non-negative int, got {num_outputs!r}")
    if isinstance(output_layouts, str):
        output_layouts = (output_layouts,)

    def decorate(function: Callable[..., Any]) -> PythonOperator:
        op_name = name or function.__name__
        schema, arg_names, reserved = _build_schema(
            function, op_name, doc, num_outputs, tuple(per_sample), no_prune
        )
        if batch and "sample" in reserved:
            raise TypeError(f"@operator({op_name!r}): 'sample' is only available per sample")
        layouts = _padded_layouts(output_layouts, num_outputs)
        kernel = _make_kernel_class(
            function, op_name, arg_names, reserved, num_outputs, layouts, batch
        )
        op = PythonOperator(function, schema, kernel)
        if register:
            from feedline.core.plugins import get_registry

            op.register(get_registry(), override=override)
        return op

    return decorate
