"""Operator arguments: the kinds of values they take, their specification (:class:`ArgSpec`),
how a given value is checked and converted, and the errors for arguments that are unknown,
missing or given with dimensions where a scalar is expected.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from feedline.core.names import schema_name
from feedline.core.types import DataType, ImageType, InterpType, TensorLayout

__all__ = [
    "COMMON_ARGS",
    "KINDS",
    "ON_ERROR_POLICIES",
    "REQUIRED",
    "ArgSpec",
    "ArgumentRankError",
    "MissingArgumentError",
    "UnknownArgumentError",
    "unknown_argument",
]


class ArgumentRankError(TypeError, RuntimeError):
    """An array with dimensions given for a scalar argument: a TypeError, and a RuntimeError as
    DALI raises it (in its words: the input "cannot be converted to dimension (0)")."""


class MissingArgumentError(TypeError, RuntimeError):
    """A required argument was not given: a TypeError, and a RuntimeError as DALI raises it."""


class UnknownArgumentError(TypeError, KeyError):
    """An argument the operator does not define: a TypeError, and a KeyError as DALI raises it
    (with DALI's sentence, which names the operator by its schema name)."""

    __str__ = BaseException.__str__  # the message as written, not KeyError's quoted repr


def unknown_argument(op_name: str, key: str, hint: Sequence[str]) -> UnknownArgumentError:
    """The error for argument ``key`` unknown to operator ``op_name``, suggesting ``hint``."""
    suggestion = f" Did you mean {', '.join(map(repr, hint))}?" if hint else ""
    return UnknownArgumentError(
        f'Argument "{key}" is not defined for operator "{schema_name(op_name)}" '
        f"({op_name} got an unexpected argument {key!r}).{suggestion}"
    )


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

_SCALAR_KINDS = {"bool", "int", "float", "str"}
_VEC_KINDS = {"int_vec": "int", "float_vec": "float", "str_vec": "str", "bool_vec": "bool"}
_ENUM_KINDS: dict[str, type[enum.IntEnum]] = {
    "dtype": DataType,
    "interp": InterpType,
    "image_type": ImageType,
}
KINDS = frozenset(
    {*_SCALAR_KINDS, *_VEC_KINDS, *_ENUM_KINDS, "layout", "layouts", "callable", "any", "dict"}
)
_KIND_DOC = {
    "bool": "bool",
    "int": "int",
    "float": "float",
    "str": "str",
    "int_vec": "int or list of int",
    "float_vec": "float or list of float",
    "str_vec": "str or list of str",
    "bool_vec": "bool or list of bool",
    "dtype": "feedline.types.DataType",
    "interp": "feedline.types.InterpType",
    "image_type": "feedline.types.ImageType",
    "layout": "layout str",
    "layouts": "layout str or list of layout str",
    "callable": "callable",
    "any": "any",
    "dict": "dict",
}

COMMON_ARGS = ("name", "device", "preserve", "seed", "on_error")

ON_ERROR_POLICIES = ("raise", "skip")
"""The values of the ``on_error`` argument of pipelines and operators."""


_PYTHON_TYPES = (bool, int, float, complex, str)


def _python_type_message(op_name: str, arg: str, value: type) -> str:
    """Why a Python type is refused as a data type (DALI refuses it too)."""
    hint = {
        bool: "types.BOOL",
        int: "types.INT32 or types.INT64",
        float: "types.FLOAT (float32) or types.FLOAT64",
    }.get(value, "a feedline.types.DataType")
    return (
        f"{op_name}: argument {arg!r} got the Python type {value.__name__!r}, which names no "
        f"element width; use {hint} (or a NumPy dtype such as np.float32)"
    )


def _type_name(value: Any) -> str:
    return type(value).__name__


def _coerce_scalar(kind: str, value: Any) -> Any:
    """Convert ``value`` to ``kind`` or raise TypeError with no context (the caller adds it)."""
    if isinstance(value, np.generic):
        value = value.item()
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
    elif kind == "int":
        if isinstance(value, int):  # DALI takes True/False for integer arguments too
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
    elif kind == "float":
        if isinstance(value, int | float):  # bools too, as in DALI
            return float(value)
    elif kind == "str" and isinstance(value, str | os.PathLike):
        return os.fspath(value)  # DALI takes pathlib.Path for its string arguments
    raise TypeError(kind)


@dataclass(frozen=True)
class ArgSpec:
    """One keyword argument of an operator.

    Attributes:
        name: the argument name.
        kind: one of ``bool int float str int_vec float_vec str_vec bool_vec dtype interp
            image_type layout layouts callable any dict``; vector kinds accept a scalar or a
            sequence and are normalised to a tuple; ``layouts`` keeps one string as a string
            (a layout for every output) and makes a sequence a tuple (one layout per output).
        default: the default value; ``REQUIRED`` if it must be given, ``None`` if optional.
        doc: the description used in the generated docs.
        tensor: whether the argument may be given per sample as a CPU DataNode.
        choices: the allowed values, if restricted.
    """

    name: str
    kind: str
    default: Any = REQUIRED
    doc: str = ""
    tensor: bool = False
    choices: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"argument {self.name!r}: unknown kind {self.kind!r}")

    @property
    def required(self) -> bool:
        """Whether the argument has no default."""
        return self.default is REQUIRED

    def coerce(self, value: Any, op_name: str) -> Any:
        """Validate and normalise ``value``.

        Raises:
            TypeError: naming the operator, the argument, the expected and the given type.
            ValueError: when the value is not one of ``choices``.
        """
        kind = self.kind
        if kind == "dtype" and isinstance(value, type) and value in _PYTHON_TYPES:
            raise TypeError(_python_type_message(op_name, self.name, value))
        try:
            if value is None and self.default is None:
                return None
            if kind in _SCALAR_KINDS:
                result = _coerce_scalar(kind, value)
            elif kind in _VEC_KINDS:
                element = _VEC_KINDS[kind]
                if isinstance(value, np.ndarray):
                    # a matrix given as an array is read row by row, as DALI does
                    value = value.ravel().tolist()
                items = value if isinstance(value, list | tuple) else [value]
                result = tuple(_coerce_scalar(element, v) for v in items)
            elif kind in _ENUM_KINDS:
                enum_type = _ENUM_KINDS[kind]
                if isinstance(value, enum_type):
                    result = value
                elif kind == "dtype" and isinstance(value, type | np.dtype):
                    from feedline.core.types import from_numpy_dtype

                    result = from_numpy_dtype(value)
                else:
                    raise TypeError(kind)
            elif kind == "layout":
                result = str(TensorLayout(value)) if isinstance(value, str) else None
                if result is None:
                    raise TypeError(kind)
            elif kind == "layouts":
                # one string (kept as a string: it means every output) or one per output
                if isinstance(value, str):
                    result = str(TensorLayout(value))
                elif isinstance(value, list | tuple):
                    result = tuple(str(TensorLayout(v)) for v in value)
                else:
                    raise TypeError(kind)
            elif kind == "callable":
                if not callable(value):
                    raise TypeError(kind)
                result = value
            elif kind == "dict":
                if not isinstance(value, Mapping):
                    raise TypeError(kind)
                result = dict(value)
            else:
                result = value
        except TypeError:
            if kind in _SCALAR_KINDS and isinstance(value, np.ndarray) and value.ndim > 0:
                raise ArgumentRankError(
                    f"{op_name}: argument {self.name!r}: Input with dimension ({value.ndim}) "
                    "cannot be converted to dimension (0)."
                ) from None
            raise TypeError(
                f"{op_name}: argument {self.name!r} expects {_KIND_DOC[kind]}, "
                f"got {_type_name(value)} ({value!r:.60})"
            ) from None
        if self.choices is not None:
            values = result if kind in _VEC_KINDS else (result,)
            bad = [v for v in values if v not in self.choices]
            if bad:
                raise ValueError(
                    f"{op_name}: argument {self.name!r} must be one of "
                    f"{', '.join(map(repr, self.choices))}; got {bad[0]!r}"
                )
        return result

    def doc_line(self) -> str:
        """The Google-style docstring entry for this argument."""
        kind = _KIND_DOC[self.kind] + (" or TensorList" if self.tensor else "")
        if self.required:
            default = "required"
        elif isinstance(self.default, enum.Enum):
            default = f"default types.{self.default.name}"
        else:
            default = f"default {self.default!r}"
        per_sample = " Per-sample values are accepted." if self.tensor else ""
        return f"{self.name} ({kind}, {default}): {self.doc}{per_sample}".rstrip()
