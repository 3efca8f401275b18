"""Image value and layout steps: [0, 1] and mean/std normalisation, tile padding, axis layouts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from feedline.plugins.structured.paths import Name, is_single_name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import FieldNotFoundError, PipelineStepBase
from feedline.plugins.structured.values import numpy_type
from feedline.types import DataType

__all__ = [
    "AxesLayoutSetter",
    "ImageMeanStdDevNormalizer",
    "ImageRange01Normalizer",
    "ImageToTileSizePadder",
    "TensorSizeAdder",
]


def _images(data: SampleDataGroup, name: Name, step: PipelineStepBase) -> list[tuple[Name, ...]]:
    paths = data.find_all_occurrences(name)
    if not paths:
        raise FieldNotFoundError(
            f"{step!r}: No occurrences of images found (no field named {name!r})"
        )
    return paths


class ImageRange01Normalizer(PipelineStepBase):
    """Every image named ``image_name`` becomes FLOAT, divided by 255."""

    def __init__(self, image_name: Name) -> None:
        self._name = image_name

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for path in _images(data_empty, self._name, self):
            data_empty.change_type_of_data_and_remove_data(path, DataType.FLOAT)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for path in _images(data, self._name, self):
            scaled = fn.cast(data.get_item_in_path(path), dtype=DataType.FLOAT) * (1.0 / 255.0)
            data.change_type_of_data_and_remove_data(path, DataType.FLOAT)
            data.set_item_in_path(path, scaled)
        return data

    def __repr__(self) -> str:
        return f"ImageRange01Normalizer({self._name!r})"


def _per_channel(value: float | Sequence[float], dtype: type, what: str) -> np.ndarray:
    array = np.asarray(value, dtype=dtype)
    if array.ndim == 0:
        array = np.repeat(array, 3)
    if array.ndim != 1:
        raise ValueError(f"ImageMeanStdDevNormalizer: {what} must be a number or one per channel")
    return array.reshape(1, 1, -1)


class ImageMeanStdDevNormalizer(PipelineStepBase):
    """``(image - mean) / std_dev`` per channel for every HWC image named ``image_name``.

    Args:
        image_name: the name of the image fields.
        mean: one value for all channels, or one per channel (in the images' channel order).
        std_dev: likewise; every value must be positive.
        output_type: the element type of the result.
    """

    def __init__(
        self,
        image_name: Name,
        mean: float | Sequence[float],
        std_dev: float | Sequence[float],
        output_type: DataType = DataType.FLOAT,
    ) -> None:
        np_type = numpy_type(output_type)
        self._name = image_name
        self._mean = _per_channel(mean, np_type, "mean")
        self._std = _per_channel(std_dev, np_type, "std_dev")
        if not np.all(self._std > 0):
            raise ValueError("ImageMeanStdDevNormalizer: Standard deviation must be greater than 0")
        self._type = output_type

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for path in _images(data_empty, self._name, self):
            if data_empty.get_type_of_item_in_path(path) != self._type:
                data_empty.change_type_of_data_and_remove_data(path, self._type)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for path in _images(data, self._name, self):
            image = data.get_item_in_path(path)
            changes = data.get_type_of_item_in_path(path) != self._type
            if changes:
                image = fn.cast(image, dtype=self._type)
            image = fn.normalize(
                image, axes=[0, 1], mean=self._mean, stddev=self._std, dtype=self._type
            )
            if changes:
                data.change_type_of_data_and_remove_data(path, self._type)
            data.set_item_in_path(path, image)
        return data

    def __repr__(self) -> str:
        return f"ImageMeanStdDevNormalizer({self._name!r})"


class ImageToTileSizePadder(PipelineStepBase):
    """Pads every HWC image named ``image_name`` with zeros to a multiple of the tile size.

    Args:
        image_name: the name of the image fields.
        tile_size_to_pad_to: one size for both axes, or ``(x, y)``, i.e. (width, height) as
            ACCV-Lab orders it.
    """

    def __init__(self, image_name: Name, tile_size_to_pad_to: int | Sequence[int]) -> None:
        tile = (
            [tile_size_to_pad_to] * 2
            if isinstance(tile_size_to_pad_to, int | np.integer)
            else list(tile_size_to_pad_to)
        )
        if len(tile) != 2 or min(tile) < 1:
            raise ValueError(
                "ImageToTileSizePadder: Tile size must be greater than 0 (one size or (x, y)); "
                f"got {tile_size_to_pad_to!r}. To keep the image size, use tile size 1."
            )
        self._name = image_name
        self._align_hw = [int(tile[1]), int(tile[0])]

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        _images(data_empty, self._name, self)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for path in _images(data, self._name, self):
            padded = fn.pad(
                data.get_item_in_path(path), axes=[0, 1], align=self._align_hw, shape=[1, 1]
            )
            data.set_item_in_path(path, padded)
        return data

    def __repr__(self) -> str:
        return f"ImageToTileSizePadder({self._name!r}, tile_hw={self._align_hw})"


class AxesLayoutSetter(PipelineStepBase):
    """Sets the axis layout (e.g. ``"HWC"``) of every field with one of the names; data unchanged.

    Args:
        names_fields_to_set: one name or several.
        layout_to_set: the layout string.
    """

    def __init__(self, names_fields_to_set: Name | Sequence[Name], layout_to_set: str) -> None:
        self._names = (
            [names_fields_to_set]
            if is_single_name(names_fields_to_set)
            else list(names_fields_to_set)  # type: ignore[arg-type]
        )
        self._layout = str(layout_to_set)

    def _paths(self, data: SampleDataGroup) -> list[tuple[Name, ...]]:
        found = []
        for name in self._names:
            paths = data.find_all_occurrences(name)
            if not paths:
                raise FieldNotFoundError(f"{self!r}: No occurrences of field {name!r} found.")
            found.extend(paths)
        return found

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        self._paths(data_empty)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for path in self._paths(data):
            data.set_item_in_path(
                path, fn.reshape(data.get_item_in_path(path), layout=self._layout)
            )
        return data

    def __repr__(self) -> str:
        return f"AxesLayoutSetter({self._names!r}, {self._layout!r})"


class TensorSizeAdder(PipelineStepBase):
    """Adds, beside every field named ``tensor_name``, its height and width (axes -3 and -2).

    The new sibling is named ``tensor_name + size_postfix`` and holds ``[height, width]``.

    Args:
        tensor_name: the name of the (HWC or ...HWC) fields.
        size_postfix: appended to ``tensor_name`` to name the size field.
        store_size_as_type: the size field's element type.
    """

    def __init__(
        self, tensor_name: str, size_postfix: str, store_size_as_type: DataType = DataType.INT32
    ) -> None:
        self._name = tensor_name
        self._size_name = f"{tensor_name}{size_postfix}"
        self._type = store_size_as_type
        self._np_type = numpy_type(store_size_as_type)

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        for path in _tensors(data_empty, self._name, self):
            data_empty.get_parent_of_path(path).add_data_field(self._size_name, self._type)
        return data_empty

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        np_type = self._np_type

        def height_width(tensor: np.ndarray) -> np.ndarray:
            return np.asarray(tensor.shape[-3:-1], dtype=np_type)

        for path in _tensors(data, self._name, self):
            size = fn.python_function(data.get_item_in_path(path), function=height_width)
            parent = data.get_parent_of_path(path)
            parent.add_data_field(self._size_name, self._type)
            parent[self._size_name] = size
        return data

    def __repr__(self) -> str:
        return f"TensorSizeAdder({self._name!r}, {self._size_name!r})"


def _tensors(data: SampleDataGroup, name: Name, step: PipelineStepBase) -> list[tuple[Name, ...]]:
    paths = data.find_all_occurrences(name)
    if not paths:
        raise FieldNotFoundError(
            f"{step!r}: No occurrences of tensors found (no field named {name!r})"
        )
    return paths
