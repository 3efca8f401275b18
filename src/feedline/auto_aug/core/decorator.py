"""The ``@augmentation`` decorator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from feedline.auto_aug.core._augmentation import Augmentation, MagRange
from feedline.core.graph.nodes import DataNode


def augmentation(
    function: Callable[..., DataNode] | None = None,
    *,
    mag_range: MagRange | None = None,
    randomly_negate: bool | None = None,
    mag_to_param: Callable[[float], Any] | None = None,
    param_device: str | None = None,
    name: str | None = None,
    augmentation_cls: type[Augmentation] | None = None,
) -> Any:
    """Turn a function of (samples, parameter) into an :class:`Augmentation`.

    The decorated augmentation takes ``magnitude_bin`` and ``num_magnitude_bins`` instead of
    the parameter; the parameter is
    ``mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)`` with
    ``magnitudes = linspace(mag_range[0], mag_range[1], num_magnitude_bins)``.

    Args:
        function: Takes at least two positional arguments, the batch and the parameter, and
            returns the transformed batch. Used bare (``@augmentation``) or with settings.
        mag_range: ``(low, high)`` ends of the magnitudes, or an array of the magnitudes.
            Without it, the parameter passed to ``function`` is ``None``.
        randomly_negate: Negate the magnitude for a random half of the samples.
        mag_to_param: Maps a magnitude to the parameter (NumPy values only: the parameters of
            all bins are computed once, when the pipeline is defined).
        param_device: ``"cpu"`` (default), ``"gpu"`` or ``"auto"`` (the samples' device).
        name: The augmentation's name; the function's name by default.
        augmentation_cls: The class to build instead of :class:`Augmentation`.
    """

    def decorate(op: Callable[..., DataNode]) -> Augmentation:
        return (augmentation_cls or Augmentation)(
            op,
            mag_range=mag_range,
            randomly_negate=randomly_negate,
            mag_to_param=mag_to_param,
            param_device=param_device,
            name=name,
        )

    if function is None:
        return decorate
    if not callable(function):
        raise Exception(
            f"The `@augmentation` decorator was used to decorate the object that "
            f"is not callable: {function}."
        )
    if isinstance(function, Augmentation):
        raise Exception(
            f"The `@augmentation` was applied to already decorated Augmentation. "
            f"Please call `{function.name}.augmentation` method to modify the augmentation "
            f"setup or apply the decorator to the underlying `{function.name}.op` directly.\n"
            f"Error in augmentation: {function}."
        )
    return decorate(function)
