"""Data types, enums and small value types shared by the whole framework (the core's ground floor).

The names follow NVIDIA DALI's ``nvidia.dali.types`` so ported code keeps working: the enums are
also reachable under their DALI names (``DALIDataType``…) and every member is exported at module
level (``types.FLOAT``, ``types.RGB``, ``types.INTERP_LINEAR``…). ``types.Constant``, which may
create a graph node, is added by the graph layer in the public :mod:`feedline.types`.
"""

from __future__ import annotations

import enum
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

    Python ``bool``/``int``/``float`` default to BOOL/INT32/FLOAT; NumPy scalars keep their dtype;
    enum members (``types.INTERP_CUBIC``) take their enum type. Without ``dtype`` the type is
    inferred from the value, as DALI's ``ScalarConstant(10)`` does.
    """

    value: bool | int | float
    dtype: DataType | None = None

    def __post_init__(self) -> None:
        if self.dtype is None:
            inferred = ScalarConstant.from_value(self.value)
            object.__setattr__(self, "value", inferred.value)
            object.__setattr__(self, "dtype", inferred.dtype)
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

    @staticmethod
    def from_value(value: Any, dtype: DataType | None = None) -> ScalarConstant:
        """Make a scalar constant from a Python or NumPy scalar."""
        if isinstance(value, np.generic | np.ndarray):
            array = np.asarray(value)
            if array.ndim != 0:
                raise ValueError(f"a scalar constant needs a 0-D value, got shape {array.shape}")
            inferred = from_numpy_dtype(array.dtype)
            python_value = array.item()
        elif enum_data_type(value) is not None:
            inferred = enum_data_type(value)
            python_value = int(value)
        elif isinstance(value, bool | int | float):
            inferred = _DEFAULT_SCALAR_TYPE[type(value)]
            python_value = value
        else:
            raise TypeError(f"expected a bool, int or float scalar, got {type(value).__name__}")
        chosen = DataType(dtype) if dtype is not None else inferred
        if dtype is not None:
            python_value = np.asarray(python_value, dtype=to_numpy_dtype(chosen)).item()
        return ScalarConstant(python_value, chosen)


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
