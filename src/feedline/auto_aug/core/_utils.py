"""Helpers shared by the AutoAugment, RandAugment and TrivialAugment suites."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from feedline.auto_aug.core._args import MissingArgException
from feedline.auto_aug.core._augmentation import Augmentation
from feedline.auto_aug.core._select import select
from feedline.core.graph.nodes import DataNode


def max_translate_hw(max_translate: Any) -> tuple[Any, Any]:
    """``(height, width)`` limits from one value or a pair."""
    if isinstance(max_translate, (tuple, list)):
        height, width = max_translate
        return height, width
    return max_translate, max_translate


def parse_validate_offset(
    use_shape: bool,
    max_translate_abs: Any = None,
    max_translate_rel: Any = None,
    default_translate_abs: Any = 250,
    default_translate_rel: Any = 1.0,
) -> tuple[Any, Any]:
    """The translation limits ``(height, width)``: relative with ``use_shape``, else absolute."""
    if not isinstance(use_shape, bool):
        raise Exception(
            f"The `use_shape` is a flag that should be set to either True or False, "
            f"got {use_shape}."
        )
    if use_shape:
        if max_translate_abs is not None:
            raise Exception(
                "The argument `max_translate_abs` cannot be used with image shapes. "
                "You may use `max_translate_rel` instead."
            )
        chosen = default_translate_rel if max_translate_rel is None else max_translate_rel
        return max_translate_hw(chosen)
    if max_translate_rel is not None:
        raise Exception(
            "The argument `max_translate_rel` cannot be used without image shapes. "
            "You may use `max_translate_abs` instead."
        )
    chosen = default_translate_abs if max_translate_abs is None else max_translate_abs
    return max_translate_hw(chosen)


def get_translations(
    use_shape: bool,
    default_translate_abs: Any,
    default_translate_rel: Any,
    max_translate_abs: Any = None,
    max_translate_rel: Any = None,
) -> list[Augmentation]:
    """``[translate_x, translate_y]`` with their magnitude ranges set to the limits."""
    from feedline.auto_aug import augmentations as a

    height, width = parse_validate_offset(
        use_shape,
        max_translate_abs=max_translate_abs,
        max_translate_rel=max_translate_rel,
        default_translate_abs=default_translate_abs,
        default_translate_rel=default_translate_rel,
    )
    x, y = (
        (a.translate_x, a.translate_y)
        if use_shape
        else (a.translate_x_no_shape, a.translate_y_no_shape)
    )
    return [x.augmentation((0, width), True), y.augmentation((0, height), True)]


def require_kwargs(
    augmentations: Iterable[Augmentation],
    op_kwargs: Mapping[str, Any],
    auto_aug_name: str,
    ref_suite_name: str,
) -> None:
    """Check, before any augmentation is traced, that each gets the named arguments it needs,
    explaining a missing ``shape`` of the shape-relative translations."""
    try:
        for augmentation in augmentations:
            augmentation._check_required_kwargs(op_kwargs)
    except MissingArgException as error:
        _explain_missing_shape(error, auto_aug_name, ref_suite_name)


def pretty_select(
    augmentations: Sequence[Augmentation],
    aug_ids: DataNode,
    op_kwargs: Mapping[str, Any],
    auto_aug_name: str,
    ref_suite_name: str,
) -> DataNode:
    """:func:`select`, explaining a missing ``shape`` of the shape-relative translations.

    Missing arguments are reported before any augmentation is traced, so the error does not
    depend on the order of the augmentations (nor on what a device supports).
    """
    require_kwargs(augmentations, op_kwargs, auto_aug_name, ref_suite_name)
    return select(augmentations, aug_ids, **op_kwargs)


def _explain_missing_shape(
    error: MissingArgException, auto_aug_name: str, ref_suite_name: str
) -> None:
    """Re-raise ``error``, in words that say how to give ``shape`` when that is what is
    missing for a shape-relative translation."""
    from feedline.auto_aug import augmentations as a

    relative = error.augmentation.op in (a.translate_x.op, a.translate_y.op)
    if error.missing_args != ["shape"] or not relative:
        raise error
    raise Exception(
        f"The augmentation `{error.augmentation.name}` requires `shape` argument that "
        f"describes image shape (in HWC layout). Please provide it as `shape` argument "
        f"to `{auto_aug_name}` call. You can get the image shape from encoded "
        f"images with `fn.peek_image_shape`. Alternatively, you can use "
        f"`translate_x_no_shape`/`translate_y_no_shape` that does not rely on image "
        f"shape, but uses offset from fixed range: for reference see `{ref_suite_name}` "
        f"and its `use_shape` argument. "
    ) from error
