"""What a tensor and a batch say about themselves (shape, type, layout, source), shared by the
CPU tensors of :mod:`feedline.core.tensor` and the GPU ones of :mod:`feedline.core.tensor_gpu`."""

from __future__ import annotations

from typing import Any

from feedline.core.types import DataType, TensorLayout, from_numpy_dtype

__all__ = ["BatchAccessors", "TensorAccessors", "check_layout"]


def check_layout(layout: str | None, ndim: int) -> str:
    """``layout`` (None: no layout) checked against ``ndim``, as a string."""
    checked = TensorLayout(layout or "")
    checked.check_ndim(ndim)
    return str(checked)


class TensorAccessors:
    """What a single tensor says about itself, shared by :class:`TensorCPU` and the GPU
    plugin's ``TensorGPU``: both keep an ``_array`` (NumPy or CuPy), a ``_layout`` and a
    ``_source_info``."""

    __slots__ = ()
    _array: Any
    _layout: str
    _source_info: str

    def shape(self) -> list[int]:
        """The shape as a list of ints."""
        return list(self._array.shape)

    @property
    def dtype(self) -> DataType:
        """The element type."""
        return from_numpy_dtype(self._array.dtype)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return self._array.ndim

    def layout(self) -> str:
        """The layout string, ``""`` if none."""
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        """Set the layout (validated against ``ndim``)."""
        self._layout = check_layout(layout, self._array.ndim)

    def source_info(self) -> str:
        """Where the sample came from (a file path), ``""`` if unknown."""
        return self._source_info


class BatchAccessors:
    """What a batch says about itself, shared by :class:`TensorListCPU` and the GPU plugin's
    ``TensorListGPU``: both keep either a ``_dense`` array (NumPy or CuPy) whose outer dimension
    is the batch or a list of ``_samples``, a ``_layout`` and a ``_source_info`` list (or None)."""

    __slots__ = ()
    _dense: Any
    _samples: list[Any] | None
    _layout: str
    _source_info: list[str] | None

    def __len__(self) -> int:
        return len(self._dense) if self._dense is not None else len(self._samples or ())

    def shape(self) -> list[tuple[int, ...]]:
        """The shape of every sample."""
        if self._dense is not None:
            return [tuple(self._dense.shape[1:])] * len(self._dense)
        return [tuple(s.shape) for s in self._samples or ()]

    @property
    def ndim(self) -> int:
        """Number of dimensions of a sample."""
        if self._dense is not None:
            return self._dense.ndim - 1
        return self._samples[0].ndim if self._samples else 0

    @property
    def dtype(self) -> DataType:
        """The element type."""
        if self._dense is not None:
            return from_numpy_dtype(self._dense.dtype)
        return from_numpy_dtype(self._samples[0].dtype) if self._samples else DataType.NO_TYPE

    def layout(self) -> str:
        """The sample layout, ``""`` if none."""
        return self._layout

    def set_layout(self, layout: str | None) -> None:
        """Set the sample layout (validated against the sample ``ndim``)."""
        self._layout = check_layout(layout, self.ndim)

    def source_info(self, index: int) -> str:
        """Where sample ``index`` came from, ``""`` if unknown."""
        return self._source_info[index] if self._source_info else ""

    def source_infos(self) -> list[str]:
        """Where every sample came from."""
        return list(self._source_info) if self._source_info else [""] * len(self)
