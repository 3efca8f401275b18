"""RandAugment (https://arxiv.org/abs/1909.13719): ``n`` augmentations drawn per sample, all
with the magnitude bin ``m``."""

from __future__ import annotations

import warnings
from typing import Any

from feedline import fn, types
from feedline.auto_aug import augmentations as a
from feedline.auto_aug.core import signed_bin
from feedline.auto_aug.core._args import forbid_unused_kwargs
from feedline.auto_aug.core._augmentation import Augmentation
from feedline.auto_aug.core._take import take
from feedline.auto_aug.core._utils import get_translations, pretty_select
from feedline.core.graph.nodes import DataNode

_DEFAULT_TRANSLATE_ABS, _DEFAULT_TRANSLATE_REL = 100, 100 / 224


def rand_augment(
    data: DataNode,
    n: int,
    m: int,
    num_magnitude_bins: int = 31,
    shape: DataNode | tuple[int, int] | None = None,
    fill_value: int | None = 128,
    interp_type: Any = None,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
    seed: int | None = None,
    monotonic_mag: bool = True,
    excluded: list[str] | None = None,
) -> DataNode:
    """Apply RandAugment to the batch: ``n`` augmentations drawn uniformly per sample and stage.

    Needs a pipeline with ``enable_conditionals=True``.

    Args:
        data: ``uint8`` images (``HWC``) or videos (``FHWC``).
        n: How many augmentations each sample goes through.
        m: The magnitude bin, from ``[0, num_magnitude_bins - 1]``.
        num_magnitude_bins: How many bins the magnitude ranges are divided into.
        shape: The (height, width) of the images, or a batch of shapes: translations are then
            relative to it.
        fill_value: The value of pixels that geometric augmentations bring in from outside.
        interp_type: Interpolation of the geometric augmentations.
        max_translate_abs: The largest shift in pixels (without ``shape``; default 100).
        max_translate_rel: The largest relative shift (with ``shape``; default 100/224).
        seed: Seed of the random choices.
        monotonic_mag: Use ranges in which a higher bin is a stronger change (default);
            ``False`` uses the AutoAugment paper's ranges
            (:func:`get_rand_augment_non_monotonic_suite`).
        excluded: Names of augmentations of the suite to leave out.
    """
    use_shape = shape is not None
    suite_of = get_rand_augment_suite if monotonic_mag else get_rand_augment_non_monotonic_suite
    augmentations = suite_of(use_shape, max_translate_abs, max_translate_rel)
    names = [aug.name for aug in augmentations]
    for name in excluded or []:
        if name not in names:
            raise Exception(
                f"The `{name}` was specified in `excluded`, but the RandAugment suite "
                f"does not contain augmentation with this name. "
                f"The augmentations in the suite are: {', '.join(names)}."
            )
    kept = [aug for aug in augmentations if aug.name not in (excluded or [])]
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if use_shape:
        kwargs["shape"] = shape
    return apply_rand_augment(
        kept, data, n, m, num_magnitude_bins=num_magnitude_bins, seed=seed, **kwargs
    )


def apply_rand_augment(
    augmentations: list[Augmentation],
    data: DataNode,
    n: int,
    m: int,
    num_magnitude_bins: int = 31,
    seed: int | None = None,
    **kwargs: Any,
) -> DataNode:
    """Apply ``augmentations`` in the RandAugment way.

    Args:
        augmentations: The suite to draw from.
        data: The batch.
        n: How many augmentations each sample goes through (0: the batch unchanged).
        m: The magnitude bin, from ``[0, num_magnitude_bins - 1]``.
        num_magnitude_bins: How many bins the magnitude ranges are divided into.
        seed: Seed of the random choices (and of the signs of the magnitudes).
        **kwargs: Extra arguments for the augmentations; one that none takes is an error.
    """
    if not isinstance(n, int) or n < 0:
        raise Exception(
            f"The number of operations to apply `n` must be a non-negative integer, got {n}."
        )
    if not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
        raise Exception(
            f"The `num_magnitude_bins` must be a positive integer, got {num_magnitude_bins}."
        )
    if not isinstance(m, int) or not 0 <= m < num_magnitude_bins:
        raise Exception(
            f"The magnitude bin `m` must be an integer from "
            f"`[0, {num_magnitude_bins - 1}]` range. Got {m}."
        )
    if n == 0:
        warnings.warn(
            "The `apply_rand_augment` was called with `n=0`, no augmentation will be applied.",
            Warning,
            stacklevel=2,
        )
        return data
    if len(augmentations) == 0:
        raise Exception(
            "The `augmentations` list cannot be empty, unless n=0. "
            "Got empty list in `apply_rand_augment` call."
        )
    shape = () if n == 1 else (n,)
    op_ids = fn.random.uniform(
        values=list(range(len(augmentations))), seed=seed, shape=shape, dtype=types.INT32
    )
    signed = any(aug.randomly_negate for aug in augmentations)
    magnitude_bin: Any = signed_bin(m, seed=seed, shape=shape) if signed else m
    forbid_unused_kwargs(augmentations, kwargs, "apply_rand_augment")
    for level in range(n):
        level_bin = magnitude_bin[level] if signed and n > 1 else magnitude_bin
        level_ids = op_ids if n == 1 else take(op_ids, level)
        op_kwargs = dict(data=data, magnitude_bin=level_bin, num_magnitude_bins=num_magnitude_bins)
        op_kwargs.update(kwargs)
        data = pretty_select(
            augmentations,
            level_ids,
            op_kwargs,
            auto_aug_name="apply_rand_augment",
            ref_suite_name="get_rand_augment_suite",
        )
    return data


def _translations(use_shape: bool, max_translate_abs: Any, max_translate_rel: Any) -> list:
    return get_translations(
        use_shape,
        _DEFAULT_TRANSLATE_ABS,
        _DEFAULT_TRANSLATE_REL,
        max_translate_abs,
        max_translate_rel,
    )


def get_rand_augment_suite(
    use_shape: bool = False,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
) -> list[Augmentation]:
    """The RandAugment augmentations, a higher bin being a stronger change.

    Args:
        use_shape: Translations relative to the image shape (``max_translate_rel``, default
            100/224) instead of absolute (``max_translate_abs``, default 100 pixels).
        max_translate_abs: Only without ``use_shape``: the largest shift, or (height, width).
        max_translate_rel: Only with ``use_shape``: the largest relative shift, or a pair.
    """
    return [
        *_translations(use_shape, max_translate_abs, max_translate_rel),
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.contrast.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.color.augmentation((0, 0.9), True, a.shift_enhance_range),
        a.sharpness.augmentation((0, 0.9), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]


def get_rand_augment_non_monotonic_suite(
    use_shape: bool = False,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
) -> list[Augmentation]:
    """The RandAugment augmentations with the AutoAugment paper's ranges for the enhancements,
    posterize and solarize (where a higher bin is not always a stronger change); arguments as
    :func:`get_rand_augment_suite`."""
    return [
        *_translations(use_shape, max_translate_abs, max_translate_rel),
        a.shear_x.augmentation((0, 0.3), True),
        a.shear_y.augmentation((0, 0.3), True),
        a.rotate.augmentation((0, 30), True),
        a.brightness.augmentation((0.1, 1.9), False, None),
        a.contrast.augmentation((0.1, 1.9), False, None),
        a.color.augmentation((0.1, 1.9), False, None),
        a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        a.solarize.augmentation((0, 256), False, None),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
