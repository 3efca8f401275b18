"""CenterNet-style heatmaps from 2-D boxes: :class:`BoundingBoxToHeatmapConverter`.

The per-object geometry is one ``fn.python_function`` (:mod:`.heatmap_geometry`); the Gaussians
are drawn by the ``draw_gaussians`` operator (CPU or GPU kernel).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.plugins.structured.paths import Name
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import PipelineStepBase
from feedline.plugins.structured.steps.heatmap_geometry import HeatmapRules, heatmap_geometry
from feedline.types import DataType

__all__ = ["BoundingBoxToHeatmapConverter"]

_GEOMETRY_OUTPUTS = ("bboxes", "centers", "center_offsets", "height_width", "active", "radii")


def _require(condition: bool, message: str) -> None:
    """Upstream checks its arguments with ``assert``; the same exception, also under ``-O``."""
    if not condition:
        raise AssertionError(message)


class BoundingBoxToHeatmapConverter(PipelineStepBase):
    """Adds a Gaussian heatmap of the 2-D boxes to every annotation with the given name.

    Each annotation (a group) is processed on its own; its sibling image (or image-size field)
    gives the image size. Boxes and centers are scaled to the heatmap and clipped to it; an
    object is drawn when it is active: valid (``is_valid_opt_in_name``), of a known category,
    large enough and keeping at least ``min_fraction_area_clipping`` of its area after clipping.
    Its Gaussian peaks (at 1) on the pixel holding its center, with a radius of the center's
    distance to the nearest box edge times ``radius_scaling_factor`` (0 when the center is outside
    the box), clamped to ``[min_radius, max_radius]``, and ``sigma = radius *
    radius_to_sigma_factor``. Added to the annotation: the heatmap (FLOAT, ``[num_categories, H,
    W]`` per category or ``[H, W]``) and, when named, ``is_active`` (BOOL), the center pixels
    (INT32 ``[x, y]``), their sub-pixel offsets, the clipped boxes' ``[height, width]`` and the
    clipped boxes (FLOAT, heatmap pixels).

    Args:
        annotation_field_name: the annotation groups (inputs are read and outputs added there).
        bboxes_in_name: the boxes in the annotation (``[x1, y1, x2, y2]``, image pixels).
        heatmap_out_name: the heatmap's name.
        heatmap_hw: the heatmap's ``(height, width)``.
        image_field_name: a sibling image (``HWC``) giving the image size; exactly one of this
            and ``image_hw_field_name`` is set.
        image_hw_field_name: a sibling field holding ``[height, width]``.
        categories_in_name: the objects' categories (needed with per-category heatmaps,
            ``num_categories`` or ``per_category_min_object_sizes``).
        num_categories: the number of categories; others make an object inactive.
        min_object_size: a ``[height, width]`` minimum (heatmap pixels) for every object.
        per_category_min_object_sizes: a ``[height, width]`` minimum per category (excludes
            ``min_object_size``).
        use_per_category_heatmap: one heatmap slice per category, else a single heatmap.
        is_valid_opt_in_name: optional per-object validity in the annotation.
        center_opt_in_name: optional object centers (image pixels); default: the boxes' centers.
        is_active_opt_out_name: name of the per-object active flags (None: not added).
        center_opt_out_name: name of the center pixels (None: not added).
        center_offset_opt_out_name: name of the sub-pixel offsets (None: not added).
        height_width_bboxes_heatmap_opt_out_name: name of the ``[height, width]`` (None: not
            added).
        bboxes_heatmap_opt_out_name: name of the clipped boxes (None: not added).
        min_fraction_area_clipping: the smallest share of the area kept after clipping.
        min_radius: the smallest radius.
        max_radius: the largest radius.
        radius_scaling_factor: the factor from the center's distance to the edge to the radius.
        radius_to_sigma_factor: the factor from the radius to the Gaussian's sigma.

    Raises:
        ValueError: not exactly one image-size source.
        AssertionError: other arguments that do not fit together (upstream's messages).
    """

    def __init__(
        self,
        annotation_field_name: Name,
        bboxes_in_name: Name,
        heatmap_out_name: Name,
        heatmap_hw: Sequence[int],
        image_field_name: Name | None = None,
        image_hw_field_name: Name | None = None,
        categories_in_name: Name | None = None,
        num_categories: int | None = None,
        min_object_size: Sequence[float] | None = None,
        per_category_min_object_sizes: Sequence[Sequence[float]] | None = None,
        use_per_category_heatmap: bool = True,
        is_valid_opt_in_name: Name | None = None,
        center_opt_in_name: Name | None = None,
        is_active_opt_out_name: Name | None = None,
        center_opt_out_name: Name | None = None,
        center_offset_opt_out_name: Name | None = None,
        height_width_bboxes_heatmap_opt_out_name: Name | None = None,
        bboxes_heatmap_opt_out_name: Name | None = None,
        min_fraction_area_clipping: float = 0.25,
        min_radius: float = 0.5,
        max_radius: float = 10.0,
        radius_scaling_factor: float = 0.8,
        radius_to_sigma_factor: float = 1.0 / 3.0,
    ) -> None:
        if (image_field_name is None) == (image_hw_field_name is None):
            raise ValueError(
                "Exactly one of 'image_field_name' or 'image_hw_field_name' must be set (single "
                "source of truth for image size)."
            )
        uses_categories = (
            use_per_category_heatmap
            or num_categories is not None
            or per_category_min_object_sizes is not None
        )
        if uses_categories:
            _require(
                categories_in_name is not None,
                "categories_in_name must be provided if categories are used (i.e. when "
                "use_per_category_heatmap=True, num_categories is not None, or "
                "per_category_min_object_sizes is not None).",
            )
            _require(
                num_categories is not None and num_categories > 0,
                "num_categories must be a positive integer (if used).",
            )
        _require(
            min_object_size is None or per_category_min_object_sizes is None,
            "min_object_size and per_category_min_object_sizes are mutually exclusive; provide "
            "only one or None.",
        )
        if per_category_min_object_sizes is not None:
            _require(
                len(per_category_min_object_sizes) == num_categories,
                "per_category_min_object_sizes must have length equal to num_categories.",
            )
            for pair in per_category_min_object_sizes:
                _require(
                    isinstance(pair, (list, tuple)) and len(pair) == 2,
                    "Each entry in per_category_min_object_sizes must be a [height, width] pair.",
                )
        _require(
            isinstance(heatmap_hw, (list, tuple)) and len(heatmap_hw) == 2,
            "heatmap_hw must be a (height, width) pair.",
        )
        _require(heatmap_hw[0] > 0 and heatmap_hw[1] > 0, "heatmap_hw dimensions must be positive.")
        self._annotation = annotation_field_name
        self._image = image_field_name
        self._image_hw = image_hw_field_name
        self._bboxes = bboxes_in_name
        self._categories = categories_in_name
        self._is_valid = is_valid_opt_in_name
        self._center_in = center_opt_in_name
        self._heatmap = heatmap_out_name
        self._per_category = use_per_category_heatmap
        self._check_categories = uses_categories
        self._slices = int(num_categories) if use_per_category_heatmap else 1
        self._hw = (int(heatmap_hw[0]), int(heatmap_hw[1]))
        self._sigma_factor = radius_to_sigma_factor
        self._optional_outputs = {
            "active": (is_active_opt_out_name, DataType.BOOL),
            "centers": (center_opt_out_name, DataType.INT32),
            "center_offsets": (center_offset_opt_out_name, DataType.FLOAT),
            "height_width": (height_width_bboxes_heatmap_opt_out_name, DataType.FLOAT),
            "bboxes": (bboxes_heatmap_opt_out_name, DataType.FLOAT),
        }
        self._rules = HeatmapRules(
            heatmap_hw=self._hw,
            num_categories=num_categories,
            min_object_size=None if min_object_size is None else tuple(min_object_size),
            per_category_min_object_sizes=(
                None
                if per_category_min_object_sizes is None
                else np.asarray(per_category_min_object_sizes, np.float32)
            ),
            min_fraction_area_clipping=min_fraction_area_clipping,
            min_radius=min_radius,
            max_radius=max_radius,
            radius_scaling_factor=radius_scaling_factor,
        )

    def _add_outputs(self, annotation: SampleDataGroup) -> None:
        fields = [(self._heatmap, DataType.FLOAT), *self._optional_outputs.values()]
        for name, dtype in fields:
            if name is None:
                continue
            try:
                annotation.add_data_field(name, dtype)
            except (KeyError, ValueError) as error:
                raise KeyError(
                    f"The input annotation must not contain the field '{name}', as it is added "
                    "by this step (name configurable on construction)."
                ) from error

    def _check_and_adjust_data_format_input_to_output(
        self, data_empty: SampleDataGroup
    ) -> SampleDataGroup:
        paths = data_empty.find_all_occurrences(self._annotation)
        if not paths:
            raise KeyError(
                "No occurrences of images found. Fields containing images are expected to have "
                f"the name '{self._image}', as specified in the constructor."
            )
        for path in paths:
            parent = data_empty.get_parent_of_path(path)
            siblings = parent.contained_top_level_field_names
            if self._image is not None and self._image not in siblings:
                raise KeyError(
                    f"For annotation in path '{path}', no image was found (i.e. no sibling field "
                    f"with name '{self._image}')"
                )
            if self._image is None and self._image_hw not in siblings:
                raise KeyError(
                    f"For annotation in path '{path}', no image size information was found (i.e. "
                    f"no sibling field with name '{self._image_hw}')"
                )
            annotation = parent[self._annotation]
            for name in (self._bboxes, self._center_in):
                if name is not None and name not in annotation.contained_top_level_field_names:
                    raise KeyError(
                        f"Inside annotation in path '{path}', no '{name}' fields was not found."
                    )
            self._add_outputs(annotation)
        return data_empty

    def _image_size(self, parent: SampleDataGroup) -> Any:
        from feedline import fn

        if self._image is None:
            return parent[self._image_hw]
        shape = parent[self._image].shape()
        return fn.cast(fn.stack(shape[-3], shape[-2]), dtype=DataType.INT32)

    def _geometry(self, annotation: SampleDataGroup, image_hw: Any) -> dict[str, Any]:
        from feedline import fn

        names = annotation.contained_top_level_field_names
        optional = {
            "centers": self._center_in,
            "categories": self._categories if self._check_categories else None,
            "is_valid": self._is_valid if self._is_valid in names else None,
        }
        present = [key for key, name in optional.items() if name is not None]
        nodes = [annotation[self._bboxes], image_hw, *(annotation[optional[k]] for k in present)]
        rules = self._rules

        def compute(bboxes: np.ndarray, hw: np.ndarray, *extra: np.ndarray) -> tuple:
            given = dict.fromkeys(optional)
            given.update(zip(present, extra, strict=True))
            categories = given["categories"]
            found = heatmap_geometry(
                bboxes,
                given["centers"],
                hw,
                None if categories is None else np.asarray(categories).reshape(-1),
                given["is_valid"],
                rules,
            )
            slice_ids = (
                np.asarray(categories, np.int32).reshape(-1)
                if self._per_category
                else np.zeros(len(found.radii), np.int32)
            )
            return (*(getattr(found, name) for name in _GEOMETRY_OUTPUTS), slice_ids)

        outputs = fn.python_function(
            *nodes, function=compute, num_outputs=len(_GEOMETRY_OUTPUTS) + 1
        )
        return dict(zip((*_GEOMETRY_OUTPUTS, "slice_ids"), outputs, strict=True))

    def _process(self, data: SampleDataGroup) -> SampleDataGroup:
        from feedline import fn

        for path in data.find_all_occurrences(self._annotation):
            parent = data.get_parent_of_path(path)
            annotation = parent[self._annotation]
            geometry = self._geometry(annotation, self._image_size(parent))
            empty = fn.constant(
                fdata=0.0, shape=[self._slices, *self._hw], dtype=DataType.FLOAT, device="cpu"
            )
            heatmap = fn.draw_gaussians(
                empty,
                geometry["active"],
                geometry["slice_ids"],
                geometry["centers"],
                geometry["radii"],
                k_for_classes=[1.0] * self._slices,
                radius_to_sigma_factor=self._sigma_factor,
            )
            if not self._per_category:
                heatmap = fn.reshape(heatmap, shape=list(self._hw))
            self._add_outputs(annotation)
            annotation[self._heatmap] = heatmap
            for key, (name, _) in self._optional_outputs.items():
                if name is not None:
                    annotation[name] = geometry[key]
        return data

    def __repr__(self) -> str:
        return f"BoundingBoxToHeatmapConverter({self._annotation!r}, {self._heatmap!r})"
