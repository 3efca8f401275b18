"""TrivialAugment (https://arxiv.org/abs/2103.10158): one augmentation and one magnitude bin
drawn per sample."""

from __future__ import annotations

from typing import Any

from feedline import fn, types
from feedline.auto_aug import augmentations as a
from feedline.auto_aug.core import signed_bin
from feedline.auto_aug.core._args import forbid_unused_kwargs
from feedline.auto_aug.core._augmentation import Augmentation
from feedline.auto_aug.core._utils import get_translations, pretty_select
from feedline.core.graph.nodes import DataNode

_DEFAULT_TRANSLATE_ABS, _DEFAULT_TRANSLATE_REL = 32, 1.0


def trivial_augment_wide(
    data: DataNode,
    num_magnitude_bins: int = 31,
    shape: DataNode | tuple[int, int] | None = None,
    fill_value: int | None = 128,
    interp_type: Any = None,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
    seed: int | None = None,
    excluded: list[str] | None = None,
) -> DataNode:
    """Apply TrivialAugment with the wide augmentation space to the batch.

    Needs a pipeline with ``enable_conditionals=True``.

    Args:
        data: ``uint8`` images (``HWC``) or videos (``FHWC``).
        num_magnitude_bins: How many bins the magnitude ranges are divided into.
        shape: The (height, width) of the images, or a batch of shapes: translations are then
            relative to it.
        fill_value: The value of pixels that geometric augmentations bring in from outside.
        interp_type: Interpolation of the geometric augmentations.
        max_translate_abs: The largest shift in pixels (without ``shape``; default 32).
        max_translate_rel: The largest relative shift (with ``shape``; default 1).
        seed: Seed of the random choices.
        excluded: Names of augmentations of the suite to leave out.
    """
    use_shape = shape is not None
    augmentations = get_trivial_augment_wide_suite(
        use_shape=use_shape,
        max_translate_abs=max_translate_abs,
        max_translate_rel=max_translate_rel,
    )
    names = [aug.name for aug in augmentations]
    for name in excluded or []:
        if name not in names:
            raise Exception(
                f"The `{name}` was specified in `excluded`, but the TrivialAugmentWide suite "
                f"does not contain augmentation with this name. "
                f"The augmentations in the suite are: {', '.join(names)}."
            )
    kept = [aug for aug in augmentations if aug.name not in (excluded or [])]
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if use_shape:
        kwargs["shape"] = shape
    return apply_trivial_augment(
        kept, data, num_magnitude_bins=num_magnitude_bins, seed=seed, **kwargs
    )


def apply_trivial_augment(
    augmentations: list[Augmentation],
    data: DataNode,
    num_magnitude_bins: int = 31,
    seed: int | None = None,
    **kwargs: Any,
) -> DataNode:
    """Apply ``augmentations`` in the TrivialAugment way: per sample, one augmentation and one
    magnitude bin from ``[0, num_magnitude_bins - 1]``, both uniformly.

    Args:
        augmentations: The suite to draw from.
        data: The batch.
        num_magnitude_bins: How many bins the magnitude ranges are divided into.
        seed: Seed of the random choices (and of the signs of the magnitudes).
        **kwargs: Extra arguments for the augmentations; one that none takes is an error.
    """
    if not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
        raise Exception(
            f"The `num_magnitude_bins` must be a positive integer, got {num_magnitude_bins}."
        )
    if len(augmentations) == 0:
        raise Exception(
            "The `augmentations` list cannot be empty. "
            "Got empty list in `apply_trivial_augment` call."
        )
    magnitude_bin: Any = fn.random.uniform(
        values=list(range(num_magnitude_bins)), dtype=types.INT32, seed=seed
    )
    if any(aug.randomly_negate for aug in augmentations):
        magnitude_bin = signed_bin(magnitude_bin, seed=seed)
    forbid_unused_kwargs(augmentations, kwargs, "apply_trivial_augment")
    op_kwargs = dict(data=data, magnitude_bin=magnitude_bin, num_magnitude_bins=num_magnitude_bins)
    op_kwargs.update(kwargs)
    op_ids = fn.random.uniform(values=list(range(len(augmentations))), seed=seed, dtype=types.INT32)
    return pretty_select(
        augmentations,
        op_ids,
        op_kwargs,
        auto_aug_name="apply_trivial_augment",
        ref_suite_name="get_trivial_augment_wide_suite",
    )


def get_trivial_augment_wide_suite(
    use_shape: bool = False,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
) -> list[Augmentation]:
    """The 14 augmentations of TrivialAugment's wide augmentation space.

    Args:
        use_shape: Translations relative to the image shape (``max_translate_rel``, default 1)
            instead of absolute (``max_translate_abs``, default 32 pixels).
        max_translate_abs: Only without ``use_shape``: the largest shift, or (height, width).
        max_translate_rel: Only with ``use_shape``: the largest relative shift, or a pair.
    """
    translations = get_translations(
        use_shape,
        _DEFAULT_TRANSLATE_ABS,
        _DEFAULT_TRANSLATE_REL,
        max_translate_abs,
        max_translate_rel,
    )
    return [
        *translations,
        a.shear_x.augmentation((0, 0.99), True),
        a.shear_y.augmentation((0, 0.99), True),
        a.rotate.augmentation((0, 135), True),
        a.brightness.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.contrast.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.color.augmentation((0.01, 0.99), True, a.shift_enhance_range),
        a.sharpness.augmentation((0.01, 0.99), True, a.sharpness_kernel),
        a.posterize.augmentation((8, 2), False, a.poster_mask_uint8),
        a.solarize.augmentation((256, 0)),
        a.equalize,
        a.auto_contrast,
        a.identity,
    ]
