"""The building blocks of the automatic augmentations: the ``@augmentation`` decorator,
signed magnitude bins, per-sample :func:`select` and the AutoAugment :class:`Policy`."""

from feedline.auto_aug.core._augmentation import Augmentation as _Augmentation
from feedline.auto_aug.core._augmentation import signed_bin
from feedline.auto_aug.core._select import select
from feedline.auto_aug.core.decorator import augmentation
from feedline.auto_aug.core.policy import Policy

__all__ = ("Policy", "_Augmentation", "augmentation", "select", "signed_bin")
