"""AutoAugment (https://arxiv.org/abs/1805.09501): per sample, one sub-policy drawn at random,
whose steps each run with their probability and magnitude."""

from __future__ import annotations

from typing import Any

import numpy as np

from feedline import fn, types
from feedline.auto_aug import _policies
from feedline.auto_aug import augmentations as a
from feedline.auto_aug.core import Policy, signed_bin
from feedline.auto_aug.core._args import forbid_unused_kwargs
from feedline.auto_aug.core._augmentation import Augmentation
from feedline.auto_aug.core._select import conditional
from feedline.auto_aug.core._take import take
from feedline.auto_aug.core._utils import get_translations, pretty_select, require_kwargs
from feedline.core.graph.nodes import DataNode

_NUM_BINS = 11
_DEFAULT_TRANSLATE_ABS, _DEFAULT_TRANSLATE_REL = 250, 1.0


def auto_augment(
    data: DataNode,
    policy_name: str = "image_net",
    shape: DataNode | tuple[int, int] | None = None,
    fill_value: int | None = 128,
    interp_type: Any = None,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
    seed: int | None = None,
) -> DataNode:
    """Apply one of the AutoAugment paper's policies to the batch.

    Needs a pipeline with ``enable_conditionals=True``.

    Args:
        data: ``uint8`` images (``HWC``) or videos (``FHWC``).
        policy_name: ``image_net`` (default), ``reduced_image_net``, ``svhn`` or
            ``reduced_cifar10``.
        shape: The (height, width) of the images, or a batch of shapes (e.g. from
            ``fn.peek_image_shape``): translations are then relative to it.
        fill_value: The value of pixels that geometric augmentations bring in from outside.
        interp_type: Interpolation of the geometric augmentations.
        max_translate_abs: The largest shift in pixels (without ``shape``; default 250).
            A pair limits (height, width).
        max_translate_rel: The largest shift as a fraction of the shape (with ``shape``;
            default 1). A pair limits (height, width).
        seed: Seed of the random choices.
    """
    policies = {
        "image_net": get_image_net_policy,
        "reduced_image_net": get_reduced_image_net_policy,
        "svhn": get_svhn_policy,
        "reduced_cifar10": get_reduced_cifar10_policy,
    }
    if not isinstance(policy_name, str) or policy_name not in policies:
        names = ", ".join(f"`{name}`" for name in policies)
        raise Exception(f"The `policy_name` must be a string that takes one of the values: {names}")
    if policy_name == "reduced_image_net":
        given = [
            name
            for value, name in (
                (shape, "shape"),
                (max_translate_abs, "max_translate_abs"),
                (max_translate_rel, "max_translate_rel"),
            )
            if value is not None
        ]
        if given:
            raise Exception(
                f"The policy `{policy_name}` does not contain any augmentations that rely on the "
                f"image shape. The `{given[0]}` argument must not be specified in that case."
            )
        policy = get_reduced_image_net_policy()
    else:
        policy = policies[policy_name](
            use_shape=shape is not None,
            max_translate_abs=max_translate_abs,
            max_translate_rel=max_translate_rel,
        )
    kwargs: dict[str, Any] = {"fill_value": fill_value, "interp_type": interp_type}
    if shape is not None:
        kwargs["shape"] = shape
    return apply_auto_augment(policy, data, seed, **kwargs)


def auto_augment_image_net(
    data: DataNode,
    shape: DataNode | tuple[int, int] | None = None,
    fill_value: int | None = 128,
    interp_type: Any = None,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
    seed: int | None = None,
) -> DataNode:
    """:func:`auto_augment` with the ``image_net`` policy."""
    return auto_augment(
        data,
        "image_net",
        shape,
        fill_value,
        interp_type,
        max_translate_abs,
        max_translate_rel,
        seed,
    )


def apply_auto_augment(
    policy: Policy, data: DataNode, seed: int | None = None, **kwargs: Any
) -> DataNode:
    """Apply ``policy`` in the AutoAugment way.

    For each sample one sub-policy is drawn uniformly; stage ``k`` of it runs when a uniform
    draw from ``[0, 1)`` is below its probability. Sub-policies shorter than the longest one
    do nothing in their missing stages.

    Args:
        policy: The policy.
        data: The batch.
        seed: Seed of the random choices (and of the signs of the magnitudes).
        **kwargs: Extra arguments for the augmentations (e.g. ``shape``, ``fill_value``,
            ``interp_type``); each gets those its signature names. One that no augmentation
            takes is an error.
    """
    if len(policy.sub_policies) == 0:
        raise Exception(f"Cannot run empty policy. Got {policy} in `apply_auto_augment` call.")
    num_stages = max(len(sub_policy) for sub_policy in policy.sub_policies)
    draws = fn.random.uniform(range=[0, 1], shape=(num_stages,), dtype=types.FLOAT, seed=seed)
    sub_policy_id = fn.random.uniform(
        values=list(range(len(policy.sub_policies))), seed=seed, dtype=types.INT32
    )
    probabilities, bins = _stage_tables(policy, num_stages)
    run_probability = take(types.Constant(probabilities), sub_policy_id)
    magnitude_bins: Any = take(types.Constant(bins), sub_policy_id)
    stage_choices, stage_augments = _sub_policy_to_augmentation_matrix_map(policy)
    choice = take(types.Constant(stage_choices), sub_policy_id)
    if any(aug.randomly_negate for aug in policy.augmentations.values()):
        magnitude_bins = signed_bin(magnitude_bins, seed=seed, shape=(num_stages,))
    forbid_unused_kwargs(policy.augmentations.values(), kwargs, "apply_auto_augment")
    require_kwargs(
        policy.augmentations.values(), kwargs, "apply_auto_augment", "get_image_net_policy"
    )
    for stage in range(num_stages):
        if isinstance(magnitude_bins, DataNode):
            stage_bin = take(magnitude_bins, stage)
        else:
            stage_bin = magnitude_bins[stage]
        op_kwargs = dict(
            data=data, magnitude_bin=stage_bin, num_magnitude_bins=policy.num_magnitude_bins
        )
        op_kwargs.update(kwargs)

        def run_stage(stage: int = stage, op_kwargs: dict[str, Any] = op_kwargs) -> DataNode:
            return pretty_select(
                stage_augments[stage],
                take(choice, stage),
                op_kwargs,
                auto_aug_name="apply_auto_augment",
                ref_suite_name="get_image_net_policy",
            )

        data = conditional(
            take(draws, stage) < take(run_probability, stage), run_stage, lambda d=data: d
        )
    return data


def _stage_tables(policy: Policy, num_stages: int) -> tuple[np.ndarray, np.ndarray]:
    """Per sub-policy and stage: the probability (0 past its end) and the magnitude bin."""
    count = len(policy.sub_policies)
    probabilities = np.zeros((count, num_stages), dtype=np.float32)
    bins = np.zeros((count, num_stages), dtype=np.int32)
    for row, sub_policy in enumerate(policy.sub_policies):
        for stage, (_, probability, magnitude) in enumerate(sub_policy):
            probabilities[row, stage] = probability
            bins[row, stage] = 0 if magnitude is None else magnitude
    return probabilities, bins


def _sub_policy_to_augmentation_matrix_map(
    policy: Policy,
) -> tuple[np.ndarray, list[list[Augmentation]]]:
    """The distinct augmentations of each stage (identity last) and, per sub-policy and stage,
    the index of the one it runs (identity past the sub-policy's end); DALI's name."""
    num_stages = max(len(sub_policy) for sub_policy in policy.sub_policies)
    per_stage: list[list[Augmentation]] = []
    for stage in range(num_stages):
        distinct: list[Augmentation] = []
        for sub_policy in policy.sub_policies:
            if stage < len(sub_policy) and sub_policy[stage][0] not in distinct:
                distinct.append(sub_policy[stage][0])
        per_stage.append([*distinct, a.identity])
    choices = np.array(
        [[len(augs) - 1 for augs in per_stage] for _ in policy.sub_policies], dtype=np.int32
    )
    for row, sub_policy in enumerate(policy.sub_policies):
        for stage, (aug, _, _) in enumerate(sub_policy):
            choices[row, stage] = per_stage[stage].index(aug)
    return choices, per_stage


def _policy(name: str, table: _policies.Table, suite: dict[str, Augmentation]) -> Policy:
    sub_policies = [[(suite[aug], p, mag) for aug, p, mag in row] for row in table]
    return Policy(name=name, num_magnitude_bins=_NUM_BINS, sub_policies=sub_policies)


def _paper_suite(translations: list[Augmentation] | None = None) -> dict[str, Augmentation]:
    """The AutoAugment paper's augmentations with its magnitude ranges."""
    suite = {
        "shear_x": a.shear_x.augmentation((0, 0.3), True),
        "shear_y": a.shear_y.augmentation((0, 0.3), True),
        "rotate": a.rotate.augmentation((0, 30), True),
        "brightness": a.brightness.augmentation((0.1, 1.9), False, None),
        "color": a.color.augmentation((0.1, 1.9), False, None),
        "contrast": a.contrast.augmentation((0.1, 1.9), False, None),
        "sharpness": a.sharpness.augmentation((0.1, 1.9), False, a.sharpness_kernel_shifted),
        "posterize": a.posterize.augmentation((0, 4), False, a.poster_mask_uint8),
        "solarize": a.solarize.augmentation((0, 256), False),
        "solarize_add": a.solarize_add.augmentation((0, 110), False),
        "invert": a.invert,
        "equalize": a.equalize,
        "auto_contrast": a.auto_contrast,
    }
    if translations is not None:
        suite["translate_x"], suite["translate_y"] = translations
    return suite


def _translations(use_shape: bool, max_translate_abs: Any, max_translate_rel: Any) -> list:
    return get_translations(
        use_shape,
        _DEFAULT_TRANSLATE_ABS,
        _DEFAULT_TRANSLATE_REL,
        max_translate_abs,
        max_translate_rel,
    )


def get_image_net_policy(
    use_shape: bool = False,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
) -> Policy:
    """The AutoAugment paper's policy for ImageNet (run it with :func:`apply_auto_augment`).

    Args:
        use_shape: Translations relative to the image shape (``max_translate_rel``, default 1)
            instead of absolute (``max_translate_abs``, default 250 pixels).
        max_translate_abs: Only without ``use_shape``: the largest shift, or (height, width).
        max_translate_rel: Only with ``use_shape``: the largest relative shift, or a pair.
    """
    suite = _paper_suite(_translations(use_shape, max_translate_abs, max_translate_rel))
    return _policy("ImageNetPolicy", _policies.IMAGE_NET, suite)


def get_reduced_cifar10_policy(
    use_shape: bool = False,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
) -> Policy:
    """The AutoAugment paper's policy for reduced CIFAR-10; arguments as
    :func:`get_image_net_policy`."""
    suite = _paper_suite(_translations(use_shape, max_translate_abs, max_translate_rel))
    return _policy("ReducedCifar10Policy", _policies.REDUCED_CIFAR10, suite)


def get_svhn_policy(
    use_shape: bool = False,
    max_translate_abs: int | None = None,
    max_translate_rel: float | None = None,
) -> Policy:
    """The AutoAugment paper's policy for SVHN; arguments as :func:`get_image_net_policy`."""
    suite = _paper_suite(_translations(use_shape, max_translate_abs, max_translate_rel))
    return _policy("SvhnPolicy", _policies.SVHN, suite)


def get_reduced_image_net_policy() -> Policy:
    """The AutoAugment paper's policy for reduced ImageNet (no translations)."""
    return _policy("ReducedImageNetPolicy", _policies.REDUCED_IMAGE_NET, _paper_suite())
