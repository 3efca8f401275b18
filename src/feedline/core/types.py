"""Data types, enums and small value types shared by the whole framework (the core's ground floor).

The names follow NVIDIA DALI's ``nvidia.dali.types`` so ported code keeps working: the enums are
also reachable under their DALI names (``DALIDataType``…) and every member is exported at module
level (``types.FLOAT``, ``types.RGB``, ``types.INTERP_LINEAR``…). ``types.Constant``, which may
create a graph node, is added by the graph layer in the public :mod:`feedline.types`.
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "BatchInfo",
    "DALIDataType",
    "DALIImageType",
    "DALIInterpType",
    "DataType",
    "ImageType",
    "InterpType",
    "PipelineAPIType",
    "SampleInfo",
    "ScalarConstant",
    "TensorLayout",
    "enum_data_type",
    "from_numpy_dtype",
    "to_numpy_dtype",
    "to_numpy_type",
]


class DataType(enum.IntEnum):
    """Element and argument types, numbered as in DALI."""

    NO_TYPE = -1
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    UINT64 = 3
    INT8 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    FLOAT16 = 8
    FLOAT = 9
    FLOAT64 = 10
    BOOL = 11
    STRING = 12
    _BOOL_VEC = 13
    _INT32_VEC = 14
    _STRING_VEC = 15
    _FLOAT_VEC = 16
    FEATURE = 17
    _FEATURE_VEC = 18
    _FEATURE_DICT = 19
    IMAGE_TYPE = 20
    DATA_TYPE = 21
    INTERP_TYPE = 22
    TENSOR_LAYOUT = 23
    PYTHON_OBJECT = 24
    _TENSOR_LAYOUT_VEC = 25
    _DATA_TYPE_VEC = 26
    _INT64_VEC = 27

    def __call__(self) -> str:
        """DALI's deprecated ``tensor.dtype()`` (from when ``dtype`` was a method): the buffer
        format of the type (``"=f"`` for FLOAT...), with DALI's warning.

        Raises:
            TypeError: the type has no buffer format (strings, enums, vectors...).
        """
        warnings.warn(
            "Calling '.dtype()' is deprecated, please use '.dtype' instead", Warning, stacklevel=2
        )
        if self not in _NUMPY_OF:
            raise TypeError(f"data type {self.name} has no buffer format")
        return "=" + _STRUCT_CODE[_NUMPY_OF[self].kind + str(_NUMPY_OF[self].itemsize)]


class InterpType(enum.IntEnum):
    """Interpolation methods of the geometric operators."""

    INTERP_NN = 0
    INTERP_LINEAR = 1
    INTERP_CUBIC = 2
    INTERP_LANCZOS3 = 3
    INTERP_TRIANGULAR = 4
    INTERP_GAUSSIAN = 5


class ImageType(enum.IntEnum):
    """Colour spaces of decoded images."""

    RGB = 0
    BGR = 1
    GRAY = 2
    YCbCr = 3
    ANY_DATA = 4


class PipelineAPIType(enum.Enum):
    """Which run API a pipeline is being driven with (they cannot be mixed)."""

    BASIC = 0
    ITERATOR = 1
    SCHEDULED = 2


DALIDataType = DataType
DALIInterpType = InterpType
DALIImageType = ImageType

_NUMPY_OF: dict[DataType, np.dtype] = {
    DataType.UINT8: np.dtype(np.uint8),
    DataType.UINT16: np.dtype(np.uint16),
    DataType.UINT32: np.dtype(np.uint32),
    DataType.UINT64: np.dtype(np.uint64),
    DataType.INT8: np.dtype(np.int8),
    DataType.INT16: np.dtype(np.int16),
    DataType.INT32: np.dtype(np.int32),
    DataType.INT64: np.dtype(np.int64),
    DataType.FLOAT16: np.dtype(np.float16),
    DataType.FLOAT: np.dtype(np.float32),
    DataType.FLOAT64: np.dtype(np.float64),
    DataType.BOOL: np.dtype(np.bool_),
}
_TYPE_OF: dict[np.dtype, DataType] = {v: k for k, v in _NUMPY_OF.items()}
_STRUCT_CODE = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I"}
_STRUCT_CODE |= {"i8": "q", "u8": "Q", "f2": "e", "f4": "f", "f8": "d"}

_ENUM_TAG = "feedline_enum"
ENUM_CLASSES: dict[DataType, type[enum.IntEnum]] = {
    DataType.INTERP_TYPE: InterpType,
    DataType.IMAGE_TYPE: ImageType,
    DataType.DATA_TYPE: DataType,
}
"""The enum held by each enum-typed :class:`DataType`. Data of these types (``random.choice``
over interpolation types, say) is stored as int32 arrays whose dtype carries the type in its
NumPy metadata, so that it keeps its type through indexing and copies, but not through
arithmetic or ``cast`` (which give plain integers, as in DALI)."""
for _data_type in ENUM_CLASSES:
    _NUMPY_OF[_data_type] = np.dtype(np.int32, metadata={_ENUM_TAG: _data_type.name})


def enum_data_type(value: Any) -> DataType | None:
    """The enum-typed :class:`DataType` of an enum member (``INTERP_TYPE`` for
    ``InterpType.INTERP_CUBIC``), or None for anything else."""
    for data_type, enum_class in ENUM_CLASSES.items():
        if type(value) is enum_class:
            return data_type
    return None


def is_enum_dtype(dtype: np.dtype) -> bool:
    """Whether a NumPy dtype holds enum-typed data (see :data:`ENUM_CLASSES`)."""
    return bool(dtype.metadata) and _ENUM_TAG in dtype.metadata  # type: ignore[operator]


def refuse_enum_buffer(dtype: np.dtype) -> None:
    """Refuse to hand out enum-typed data through NumPy conversions, as DALI refuses the buffer
    protocol for it (its values are enum members, not numbers; ``fn.cast`` makes numbers).

    Raises:
        TypeError: ``dtype`` holds enum-typed data (DALI's type and wording).
    """
    if is_enum_dtype(dtype):
        raise TypeError(
            "DALI enum types cannot be used with buffer protocol when they are returned as "
            "Tensors or TensorLists from DALI pipeline. You can use `nvidia.dali.fn.cast` to "
            "convert those values to an integral type (`feedline.fn.cast` in feedline)."
        )


_FLOATING = {DataType.FLOAT16: "float16", DataType.FLOAT: "float", DataType.FLOAT64: "double"}
_ENUM_TYPE_NAMES = {
    DataType.DATA_TYPE: "DALIDataType",
    DataType.IMAGE_TYPE: "DALIImageType",
    DataType.INTERP_TYPE: "DALIInterpType",
}


def dali_type_name(dtype: DataType) -> str:
    """The name DALI's messages give a data type (``float`` for FLOAT, ``double`` for FLOAT64,
    ``int8``, ``bool``..., the enum name for others)."""
    dtype = DataType(dtype)
    return _FLOATING.get(dtype) or _ENUM_TYPE_NAMES.get(dtype) or dtype.name.lower()


def check_enum_cast(source: DataType, target: DataType) -> None:
    """DALI's rule for casts of enum-typed data: to and from integral types only.

    Raises:
        RuntimeError: one side is an enum type and the other a floating-point type (DALI's
            type and wording, which names the types as DALI does).
    """
    pair = (source, target)
    if any(t in ENUM_CLASSES for t in pair) and any(t in _FLOATING for t in pair):
        names = [_ENUM_TYPE_NAMES.get(t) or _FLOATING[t] for t in pair]
        raise RuntimeError(
            f"Cannot cast from {names[0]} to {names[1]}. Enums can only participate in casts "
            "with integral types, but not floating point types."
        )


def to_numpy_dtype(dtype: DataType) -> np.dtype:
    """Return the NumPy dtype of a numeric :class:`DataType`.

    Raises:
        TypeError: if ``dtype`` has no NumPy equivalent (``STRING``, ``NO_TYPE``…).
    """
    try:
        return _NUMPY_OF[DataType(dtype)]
    except (KeyError, ValueError):
        raise TypeError(f"data type {dtype!r} has no NumPy equivalent") from None


def to_numpy_type(dtype: DataType) -> type:
    """Return the NumPy scalar type (``np.float32``…) of a numeric :class:`DataType`, as DALI's
    ``types.to_numpy_type`` does.

    Raises:
        TypeError: if ``dtype`` has no NumPy equivalent (``STRING``, ``NO_TYPE``…).
    """
    return to_numpy_dtype(dtype).type


def from_numpy_dtype(dtype: Any) -> DataType:
    """Return the :class:`DataType` of a NumPy dtype (or anything ``np.dtype`` accepts).

    Raises:
        TypeError: for dtypes feedline cannot hold (complex, object, strings…).
    """
    np_dtype = np.dtype(dtype)
    tag = (np_dtype.metadata or {}).get(_ENUM_TAG)
    if tag is not None:
        return DataType[tag]
    try:
        return _TYPE_OF[np_dtype.newbyteorder("=")]
    except KeyError:
        raise TypeError(f"NumPy dtype {np_dtype} is not supported by feedline") from None


class TensorLayout(str):
    """A layout string such as ``"HWC"``: one letter per dimension (``""`` = no layout)."""

    __slots__ = ()

    def __new__(cls, value: str = "") -> TensorLayout:
        if not isinstance(value, str):
            raise TypeError(f"a layout must be a string, got {type(value).__name__}")
        if len(set(value)) != len(value):
            raise ValueError(f"layout {value!r} names a dimension twice")
        return super().__new__(cls, value)

    @property
    def ndim(self) -> int:
        """Number of dimensions the layout describes."""
        return len(self)

    def check_ndim(self, ndim: int) -> None:
        """Raise ValueError if the layout does not describe ``ndim`` dimensions."""
        if self and len(self) != ndim:
            raise ValueError(
                f"layout {str(self)!r} has {len(self)} dimensions, the data has {ndim}"
            )


class SampleInfo(NamedTuple):
    """Where a sample stands, passed to per-sample ``external_source`` callbacks."""

    idx_in_epoch: int
    idx_in_batch: int
    iteration: int
    epoch_idx: int


class BatchInfo(NamedTuple):
    """Where a batch stands, passed to batch ``external_source`` callbacks (``batch_info=True``)."""

    iteration: int
    epoch_idx: int


_DEFAULT_SCALAR_TYPE = {bool: DataType.BOOL, int: DataType.INT32, float: DataType.FLOAT}
_INT32_RANGE = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class ScalarConstant:
    """A scalar used inline in an expression (``x + types.Constant(2)``).

    Python ``bool``/``int``/``float`` default to BOOL/INT32/FLOAT; NumPy scalars keep their dtype.
    Without ``dtype`` the type is inferred from the value, as DALI's ``ScalarConstant(10)`` does.
    Enum members and enum types are refused, as in DALI: ``types.Constant(types.INTERP_CUBIC)``
    makes a constant node of enum-typed data instead.

    As DALI's, ``c.uint8()``, ``c.float16()`` and the other methods named after the numeric
    types (``bool``, ``int8`` … ``uint64``, ``float16``, ``float32``, ``float64``) give the same
    value as a constant of that type, and ``bool(c)``/``int(c)`` need a boolean or integer
    constant, ``float(c)`` a floating-point one (TypeError otherwise).
    """

    value: bool | int | float
    dtype: DataType | None = None

    def __post_init__(self) -> None:
        _refuse_enum_scalar(self.value, self.dtype)
        if self.dtype is None:
            inferred = ScalarConstant.from_value(self.value)
            object.__setattr__(self, "value", inferred.value)
            object.__setattr__(self, "dtype", inferred.dtype)
        else:  # the value as the Python type of its dtype, as DALI stores it
            value = np.asarray(self.value).item() if _is_numpy_scalar(self.value) else self.value
            _check_scalar(value)
            object.__setattr__(self, "dtype", DataType(self.dtype))
            object.__setattr__(self, "value", _python_type(self.dtype)(value))
        if self.dtype in (DataType.INT32,) and isinstance(self.value, int):
            low, high = _INT32_RANGE
            if not low <= self.value <= high:
                raise OverflowError(
                    f"integer constant {self.value} does not fit in int32; "
                    "use types.Constant(value, dtype=types.INT64)"
                )

    def as_array(self) -> np.ndarray:
        """The constant as a 0-D NumPy array of its dtype."""
        return np.asarray(self.value, dtype=to_numpy_dtype(self.dtype))

    def __bool__(self) -> bool:
        if _python_type(self.dtype) is float:
            raise TypeError(
                "DALI ScalarConstant must be converted to one of bool or int types explicitly "
                "before casting to builtin `bool`."
            )
        return bool(self.value)

    def __int__(self) -> int:
        if _python_type(self.dtype) is float:
            raise TypeError(
                "DALI ScalarConstant must be converted to one of bool or int types explicitly "
                "before casting to builtin `int`."
            )
        return int(self.value)

    def __float__(self) -> float:
        if _python_type(self.dtype) is not float:
            raise TypeError(
                "DALI ScalarConstant must be converted to one of the float types explicitly "
                "before casting to builtin `float`."
            )
        return float(self.value)

    @staticmethod
    def from_value(value: Any, dtype: DataType | None = None) -> ScalarConstant:
        """Make a scalar constant from a Python or NumPy scalar.

        Raises:
            TypeError: ``value`` is not a bool, int or float scalar (enum members included), or
                ``dtype`` is an enum type (DALI's types and wording).
        """
        _refuse_enum_scalar(value, dtype)
        if isinstance(value, np.generic | np.ndarray):
            array = np.asarray(value)
            if array.ndim != 0:
                raise ValueError(f"a scalar constant needs a 0-D value, got shape {array.shape}")
            inferred = from_numpy_dtype(array.dtype)
            python_value = array.item()
        elif isinstance(value, bool | int | float):
            inferred = _DEFAULT_SCALAR_TYPE[type(value)]
            python_value = value
        else:
            _check_scalar(value)
        chosen = DataType(dtype) if dtype is not None else inferred
        if dtype is not None:
            python_value = np.asarray(python_value, dtype=to_numpy_dtype(chosen)).item()
        return ScalarConstant(python_value, chosen)


_FLOAT_TYPES = (DataType.FLOAT16, DataType.FLOAT, DataType.FLOAT64)
_CONVERSIONS = {
    "bool": DataType.BOOL,
    "int8": DataType.INT8,
    "int16": DataType.INT16,
    "int32": DataType.INT32,
    "int64": DataType.INT64,
    "uint8": DataType.UINT8,
    "uint16": DataType.UINT16,
    "uint32": DataType.UINT32,
    "uint64": DataType.UINT64,
    "float16": DataType.FLOAT16,
    "float32": DataType.FLOAT,
    "float64": DataType.FLOAT64,
}
"""DALI's conversion methods of a :class:`ScalarConstant` (``Constant(1).uint8()``) and the
type each one gives."""


def _python_type(dtype: DataType) -> type:
    return bool if dtype == DataType.BOOL else float if dtype in _FLOAT_TYPES else int


def _is_numpy_scalar(value: Any) -> bool:
    return isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0)


def _check_scalar(value: Any) -> None:
    if not isinstance(value, bool | int | float):
        raise TypeError(
            f"Expected scalar value of type 'bool', 'int' or 'float', got {type(value)}."
        )


def _converter(name: str, dtype: DataType) -> Any:
    def convert(self: ScalarConstant) -> ScalarConstant:
        return ScalarConstant(self.value, dtype)

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"This constant as a ``{dtype.name}`` constant (for type promotion)."
    return convert


for _name, _dtype in _CONVERSIONS.items():
    setattr(ScalarConstant, _name, _converter(_name, _dtype))


def _refuse_enum_scalar(value: Any, dtype: DataType | None) -> None:
    """DALI's refusal of enum values and enum types in a :class:`ScalarConstant` (the enums are
    ``IntEnum`` here, so ``isinstance(value, int)`` alone would let them in)."""
    enum_type = enum_data_type(value)
    if enum_type is not None:
        raise TypeError(
            "Expected scalar value of type 'bool', 'int' or 'float', got "
            f"types.{_ENUM_TYPE_NAMES[enum_type]}."
        )
    if dtype is not None and DataType(dtype) in ENUM_CLASSES:
        raise TypeError(
            f"DALI ScalarConstant can only hold boolean, integer or floating-point types, not "
            f"{DataType(dtype).name}; types.Constant(value, dtype=...) makes a constant node of it."
        )


def _export_members() -> None:
    module_globals = globals()
    for enum_type in (DataType, InterpType, ImageType):
        for name, member in enum_type.__members__.items():
            if not name.startswith("_"):
                module_globals[name] = member
                __all__.append(name)


_export_members()

# DALI's legacy layout names: the layout of one sample (no batch dimension), as in DALI.
NHWC = "HWC"
NCHW = "CHW"
NFHWC = "FHWC"
NFCHW = "FCHW"
SAME = ""
CPU_ONLY_DEVICE_ID = None
__all__ += ["CPU_ONLY_DEVICE_ID", "NCHW", "NFCHW", "NFHWC", "NHWC", "SAME"]
