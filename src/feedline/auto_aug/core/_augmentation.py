"""The :class:`Augmentation` wrapper and signed magnitude bins."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from feedline import fn, types
from feedline.auto_aug.core._args import (
    MissingArgException,
    accepted_kwargs,
    missing_kwargs,
    num_positional_args,
)
from feedline.auto_aug.core._take import take
from feedline.core.graph.nodes import DataNode

MagRange = tuple[float, float] | np.ndarray


class _UndefinedParam:
    """Marks an argument of :meth:`Augmentation.augmentation` that was not given."""


class _SignedMagnitudeBin:
    """A magnitude bin paired with a random sign (0: keep the magnitude, 1: negate it)."""

    def __init__(
        self, magnitude_bin: int | DataNode, random_sign: DataNode, signed_index: DataNode
    ) -> None:
        self._magnitude_bin = magnitude_bin
        self._random_sign = random_sign
        self._signed_index = signed_index

    def __getitem__(self, position: int) -> _SignedMagnitudeBin:
        """The signed bin of one stage when bins and signs were drawn for several stages."""
        magnitude_bin = self._magnitude_bin
        if not isinstance(magnitude_bin, int):
            magnitude_bin = take(magnitude_bin, position)
        return type(self)(
            magnitude_bin, take(self._random_sign, position), take(self._signed_index, position)
        )

    @classmethod
    def create_from_bin(
        cls,
        magnitude_bin: int | DataNode,
        random_sign: DataNode | None = None,
        seed: int | None = None,
        shape: tuple[int, ...] | None = None,
    ) -> _SignedMagnitudeBin:
        """Pair ``magnitude_bin`` with ``random_sign`` (drawn here when not given)."""
        if not isinstance(magnitude_bin, (int, DataNode)) or isinstance(magnitude_bin, bool):
            raise Exception(
                f"The `magnitude_bin` must be an int or _DataNode (output of DALI op "
                f"or `types.Constant`) representing batch of ints from "
                f"`[0..num_magnitude_bins-1]` range. Got {magnitude_bin} instead."
            )
        if random_sign is not None and (seed is not None or shape is not None):
            raise Exception(
                "The `random_sign` cannot be specified together with neither `seed` nor `shape`."
            )
        if random_sign is None:
            random_sign = fn.random.uniform(
                values=[0, 1], dtype=types.INT32, seed=seed, shape=shape
            )
        # Computed here, before any conditional split, so every branch reads the same values.
        signed_index = magnitude_bin * 2 + random_sign
        return cls(magnitude_bin, random_sign, signed_index)

    @staticmethod
    def _remap_to_signed_magnitudes(magnitudes: Any) -> np.ndarray:
        """Interleave each magnitude with its negation: ``[m0, -m0, m1, -m1, ...]``."""
        magnitudes = np.asarray(magnitudes)
        return np.stack([magnitudes, -magnitudes], axis=1).reshape(-1)

    @property
    def bin(self) -> int | DataNode:
        """The unsigned magnitude bin."""
        return self._magnitude_bin

    @property
    def random_sign(self) -> DataNode:
        """The batch of signs (1 negates the magnitude)."""
        return self._random_sign

    @property
    def signed_magnitude_idx(self) -> DataNode:
        """``2 * bin + sign``: the index into the interleaved signed magnitudes."""
        return self._signed_index


def signed_bin(
    magnitude_bin: int | DataNode,
    random_sign: DataNode | None = None,
    seed: int | None = None,
    shape: tuple[int, ...] | None = None,
) -> _SignedMagnitudeBin:
    """Combine a magnitude bin with a random sign, once, before a batch is split.

    Args:
        magnitude_bin: A bin from ``[0, num_magnitude_bins - 1]``, as an int or a batch of ints.
        random_sign: A batch of 0/1 ints; 1 negates the magnitude of augmentations declared
            with ``randomly_negate=True``. Drawn at random when omitted.
        seed: Seed of the random sign (only when ``random_sign`` is omitted).
        shape: Shape of the random sign per sample (only when ``random_sign`` is omitted).
    """
    return _SignedMagnitudeBin.create_from_bin(magnitude_bin, random_sign, seed, shape)


def _as_array(magnitude: Any) -> np.ndarray:
    return np.array(magnitude)


def _contains_data_node(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_contains_data_node(item) for item in value)
    return isinstance(value, DataNode)


class Augmentation:
    """A transformation written with feedline operators, ready for the automatic augmentations.

    Create one with the :func:`~feedline.auto_aug.core.augmentation` decorator.
    """

    def __init__(
        self,
        op: Callable[..., DataNode],
        mag_range: MagRange | None = None,
        randomly_negate: bool | None = None,
        mag_to_param: Callable[[float], Any] | None = None,
        param_device: str | None = None,
        name: str | None = None,
    ) -> None:
        self._op = op
        self._mag_range = mag_range
        self._randomly_negate = randomly_negate
        self._mag_to_param = mag_to_param
        self._param_device = param_device
        self._name = name
        positional = num_positional_args(op)
        if positional <= 1:
            raise Exception(
                f"The {op} accepts {positional} positional argument(s), "
                f"but the functions decorated with `@augmentation` must accept at least two "
                f"positional arguments: the samples and parameters.\nError in: {self}."
            )

    def __repr__(self) -> str:
        settings = [
            f"{key}={value!r}" for key, value in self._config().items() if value is not None
        ]
        return f"Augmentation({', '.join([repr(self.op), *settings])})"

    def __call__(
        self,
        data: DataNode,
        *,
        magnitude_bin: int | DataNode | _SignedMagnitudeBin | None = None,
        num_magnitude_bins: int | None = None,
        **kwargs: Any,
    ) -> DataNode:
        """Apply the transformation with the parameter of the given magnitude bin.

        The parameter is ``mag_to_param(magnitudes[magnitude_bin] * (-1) ** random_sign)``
        with ``magnitudes = linspace(*mag_range, num_magnitude_bins)`` (or ``mag_range`` itself
        when it is an array).

        Args:
            data: The batch to transform.
            magnitude_bin: An int, a batch of ints, or a :func:`signed_bin`.
            num_magnitude_bins: The number of bins the magnitude range is divided into.
            **kwargs: Extra arguments; those the operation's signature names are passed on.
        """
        param = self._param(magnitude_bin, num_magnitude_bins, self._device_for(data))
        self._check_required_kwargs(kwargs)
        return self.op(data, param, **accepted_kwargs(self.op, kwargs, 2))

    def _check_required_kwargs(self, kwargs: Mapping[str, Any]) -> None:
        """Raise :class:`MissingArgException` when ``kwargs`` lacks a named argument the
        operation requires (names it does not take are ignored)."""
        missing = missing_kwargs(self.op, kwargs, 2)
        if missing:
            raise MissingArgException(
                f"The augmentation `{self.name}` requires following named argument(s) "
                f"which were not provided to the call: {', '.join(missing)}. "
                f"Please make sure to pass the required arguments when calling the "
                f"augmentation.",
                augmentation=self,
                missing_args=missing,
            )

    @property
    def op(self) -> Callable[..., DataNode]:
        """The decorated function."""
        return self._op

    @property
    def mag_range(self) -> MagRange | None:
        """The magnitude range, or the explicit magnitudes."""
        return self._mag_range

    @property
    def mag_to_param(self) -> Callable[[float], Any]:
        """Maps one magnitude to the operation's parameter."""
        return self._mag_to_param or _as_array

    @property
    def randomly_negate(self) -> bool:
        """Whether the magnitude is negated for a random half of the samples."""
        return bool(self._randomly_negate)

    @property
    def param_device(self) -> str:
        """Where the precomputed parameters live: ``cpu``, ``gpu`` or ``auto``."""
        return self._param_device or "cpu"

    @property
    def name(self) -> str:
        """The augmentation's name (the function's name unless given)."""
        return self._name or self.op.__name__

    def augmentation(
        self,
        mag_range: Any = _UndefinedParam,
        randomly_negate: Any = _UndefinedParam,
        mag_to_param: Any = _UndefinedParam,
        param_device: Any = _UndefinedParam,
        name: Any = _UndefinedParam,
        augmentation_cls: type[Augmentation] | None = None,
    ) -> Augmentation:
        """A new augmentation of the same operation with some settings replaced."""
        config = self._config()
        updates = {
            "mag_range": mag_range,
            "randomly_negate": randomly_negate,
            "mag_to_param": mag_to_param,
            "param_device": param_device,
            "name": name,
        }
        config.update(
            {key: value for key, value in updates.items() if value is not _UndefinedParam}
        )
        return (augmentation_cls or type(self))(self.op, **config)

    def _config(self) -> dict[str, Any]:
        return {
            "mag_range": self._mag_range,
            "mag_to_param": self._mag_to_param,
            "randomly_negate": self._randomly_negate,
            "param_device": self._param_device,
            "name": self._name,
        }

    def _device_for(self, data: DataNode) -> str:
        if self.param_device != "auto":
            return self.param_device
        return getattr(data, "device", None) or "cpu"

    def _map_mag_to_param(self, magnitude: Any) -> np.ndarray:
        """The parameter ``mag_to_param`` gives for one magnitude, as an array (DALI's name)."""
        param = self.mag_to_param(magnitude)
        if _contains_data_node(param):
            raise Exception(
                f"The `mag_to_param` callback of `{self.name}` augmentation returned `DataNode`, "
                f"i.e. an output of a pipelined operator, which is not supported there. "
                f"Instead, the `mag_to_param` callback must return parameter that is `np.ndarray` "
                f"or is directly convertible to `np.ndarray`, so that all parameters can "
                f"be precomputed and reused across iterations.\n\n"
                f"Error in augmentation: {self}."
            )
        return np.array(param)

    def _map_mags_to_params(self, magnitudes: Any) -> np.ndarray:
        """The parameters of all magnitudes stacked into one array (DALI's name); every
        magnitude must map to the same shape and dtype."""
        params = [self._map_mag_to_param(magnitude) for magnitude in magnitudes]
        if not params:
            return np.array(params)
        first = params[0]
        for param, magnitude in zip(params, magnitudes, strict=True):
            if param.shape != first.shape or param.dtype != first.dtype:
                raise Exception(
                    f"The `mag_to_param` callback of `{self.name}` augmentation must return "
                    f"the arrays of the same type and shape for different magnitudes. "
                    f"Got param of shape {first.shape} and {first.dtype} type for magnitude "
                    f"{magnitudes[0]}, but for magnitude {magnitude} the returned array "
                    f"has shape {param.shape} and type {param.dtype}.\n\n"
                    f"Error in augmentation: {self}."
                )
        return np.array(params)

    def _get_magnitudes(self, num_magnitude_bins: int | None) -> Any:
        mag_range = self.mag_range
        if mag_range is None:
            return None
        if isinstance(mag_range, np.ndarray):
            if num_magnitude_bins is not None and len(mag_range) != num_magnitude_bins:
                raise Exception(
                    f"The augmentation `{self.name}` has nd.array of length {len(mag_range)} "
                    f"specified as the `mag_range`. However, the `num_magnitude_bins` "
                    f"passed to the call is {num_magnitude_bins}."
                )
            return mag_range
        if num_magnitude_bins is None:
            raise Exception(
                f"The `num_magnitude_bins` argument is missing in the call of "
                f"the `{self.name}` augmentation. Please specify the `num_magnitude_bins` "
                f"along with the samples and magnitude_bin."
                f"\nError in augmentation: {self}."
            )
        if not hasattr(mag_range, "__len__") or len(mag_range) != 2:
            raise Exception(
                f"The `mag_range` must be a tuple of (low, high) ends of magnitude range or "
                f"nd.array of explicitly defined magnitudes. Got `{self.mag_range}` for "
                f"augmentation `{self.name}`."
            )
        low, high = mag_range
        return np.linspace(low, high, num_magnitude_bins, dtype=np.float32)

    def _param(
        self,
        magnitude_bin: int | DataNode | _SignedMagnitudeBin | None,
        num_magnitude_bins: int | None,
        device: str,
    ) -> DataNode | None:
        magnitudes = self._get_magnitudes(num_magnitude_bins)
        if magnitudes is None:
            return None
        if magnitude_bin is None:
            raise Exception(
                f"The augmentation `{self.name}` has `mag_range` specified, "
                f"so when called, it requires `magnitude_bin` parameter to select "
                f"the magnitude from the `mag_range`.\nError in augmentation: {self}."
            )
        if not self.randomly_negate:
            unsigned = (
                magnitude_bin.bin
                if isinstance(magnitude_bin, _SignedMagnitudeBin)
                else magnitude_bin
            )
            if isinstance(unsigned, int):
                return types.Constant(self._map_mag_to_param(magnitudes[unsigned]), device=device)
            return take(
                types.Constant(self._map_mags_to_params(magnitudes), device=device), unsigned
            )
        if not isinstance(magnitude_bin, _SignedMagnitudeBin):
            warnings.warn(
                f"The augmentation `{self.name}` was declared with `random_negate=True`, "
                f"but unsigned `magnitude_bin` was passed to the augmentation call. "
                f"The augmentation will randomly negate the magnitudes manually. "
                f"However, for better performance, if you conditionally split batch "
                f"between multiple augmentations, it is better to call "
                f"`signed_magnitude_bin = signed_bin(magnitude_bin)` before the split "
                f"and pass the signed bins instead.",
                Warning,
                stacklevel=2,
            )
            magnitude_bin = signed_bin(magnitude_bin)
        if isinstance(magnitude_bin.bin, int):
            signed = _SignedMagnitudeBin._remap_to_signed_magnitudes(
                [magnitudes[magnitude_bin.bin]]
            )
            index = magnitude_bin.random_sign
        else:
            signed = _SignedMagnitudeBin._remap_to_signed_magnitudes(magnitudes)
            index = magnitude_bin.signed_magnitude_idx
        return take(types.Constant(self._map_mags_to_params(signed), device=device), index)
