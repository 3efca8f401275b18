"""The AutoAugment :class:`Policy`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from feedline.auto_aug.core._augmentation import Augmentation

SubPolicy = Sequence[tuple[Augmentation, float, int | None]]


class Policy:
    """An augmentation policy in the AutoAugment style (https://arxiv.org/abs/1805.09501).

    Args:
        name: The policy's name, for display.
        num_magnitude_bins: How many bins the augmentations' magnitude ranges are divided into.
        sub_policies: Sequences of ``(augmentation, probability, magnitude_bin)``. For each
            sample one sub-policy is drawn uniformly; its steps then run in order, each with
            its probability and magnitude bin (``None`` for augmentations without magnitudes).
    """

    def __init__(
        self, name: str, num_magnitude_bins: int, sub_policies: Sequence[SubPolicy]
    ) -> None:
        self.name = name
        self.num_magnitude_bins = num_magnitude_bins
        if not isinstance(num_magnitude_bins, int) or num_magnitude_bins < 1:
            raise Exception(
                f"The `num_magnitude_bins` must be a positive integer, got {num_magnitude_bins}."
            )
        if not isinstance(sub_policies, (list, tuple)):
            raise Exception(
                f"The `sub_policies` must be a list or tuple of sub policies, "
                f"got {type(sub_policies)}."
            )
        for sub_policy in sub_policies:
            if not isinstance(sub_policy, (list, tuple)):
                raise Exception(f"Each sub policy must be a list or tuple, got {sub_policy}.")
            for step in sub_policy:
                self._check_step(step)
        self.sub_policies = _with_unique_names(sub_policies)

    def _check_step(self, step: object) -> None:
        if not isinstance(step, (list, tuple)) or len(step) != 3:
            raise Exception(
                f"Each operation in sub policy must be specified as a triple: "
                f"(augmentation, probability, magnitude). Got {step}."
            )
        aug, probability, magnitude = step
        if not isinstance(aug, Augmentation):
            raise Exception(
                f"Each augmentation in sub policies must be an instance of "
                f"Augmentation. Got `{aug}`. Did you forget to use `@augmentation` "
                f"decorator?"
            )
        if not isinstance(probability, (float, int)) or not 0 <= probability <= 1:
            raise Exception(
                f"Probability of applying the augmentation must be a number from "
                f"`[0, 1]` range. Got `{probability}` for augmentation `{aug.name}`."
            )
        if probability == 0:
            warnings.warn(
                f"The augmentation `{aug.name}` in policy `{self.name}` is used with "
                f"probability 0 in one of the sub-policies.",
                stacklevel=3,
            )
        if magnitude is None:
            if aug.mag_range is not None:
                raise Exception(
                    f"The augmentation `{aug.name}` has `mag_range` specified, so the "
                    f"magnitude bin is required. However, got `None` in the policy "
                    f"`{self.name}`."
                )
            return
        if aug.mag_range is None:
            warnings.warn(
                f"The magnitude bin `{magnitude}` for augmentation `{aug.name}` in policy "
                f"`{self.name}` will be ignored. The augmentation does not accept "
                f"magnitudes (as it has no `mag_range` specified). You can specify "
                f"`None` instead of `{magnitude}` to silence this warning.",
                stacklevel=3,
            )
        if not isinstance(magnitude, int) or not 0 <= magnitude < self.num_magnitude_bins:
            raise Exception(
                f"Magnitude of the augmentation must be an integer from "
                f"`[0, {self.num_magnitude_bins - 1}]` range. "
                f"Got `{magnitude}` for augmentation `{aug.name}`."
            )

    @property
    def augmentations(self) -> dict[str, Augmentation]:
        """The policy's augmentations by name, sorted by name."""
        unique = {aug for sub_policy in self.sub_policies for aug, _, _ in sub_policy}
        return {aug.name: aug for aug in sorted(unique, key=lambda aug: aug.name)}

    def __repr__(self) -> str:
        subs = ",\n\t".join(
            repr([(aug.name, p, mag) for aug, p, mag in sub]) for sub in self.sub_policies
        )
        augs = ",\n\t".join(f"'{name}': {aug!r}" for name, aug in self.augmentations.items())
        subs_sep = "\n\t" if subs else ""
        augs_sep = "\n\t" if augs else ""
        return (
            f"Policy(name={self.name!r}, num_magnitude_bins={self.num_magnitude_bins!r}, "
            f"sub_policies=[{subs_sep}{subs}], augmentations={{{augs_sep}{augs}}})"
        )


def _with_unique_names(sub_policies: Sequence[SubPolicy]) -> tuple[tuple, ...]:
    """The sub-policies as tuples; distinct augmentations sharing a name get numbered names."""
    in_order: list[Augmentation] = []
    for sub_policy in sub_policies:
        for aug, _, _ in sub_policy:
            if aug not in in_order:
                in_order.append(aug)
    if len({aug.name for aug in in_order}) == len(in_order):
        return tuple(tuple(sub_policy) for sub_policy in sub_policies)
    width = len(str(len(in_order) - 1))
    renamed = {
        aug: aug.augmentation(name=f"{str(i).zfill(width)}__{aug.name}")
        for i, aug in enumerate(in_order)
    }
    return tuple(
        tuple((renamed[aug], p, mag) for aug, p, mag in sub_policy) for sub_policy in sub_policies
    )
