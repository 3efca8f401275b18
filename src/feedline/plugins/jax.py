"""JAX iterator with DALI's API and epoch semantics (``nvidia.dali.plugin.jax``).

Batches are ``{name: jax.Array}`` handed over through DLPack. With several pipelines (one per
shard) the per-pipeline batches become one ``jax.Array`` sharded over devices: over ``sharding``
when given, else one pipeline per local device (shape ``(pipelines, batch, ...)``, usable with
``pmap``), or stacked on one device when JAX has fewer devices than pipelines. ``jax`` is
imported when an iterator is created, not when this module is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.plugins.iterator import BaseIterator, IteratorError, LastBatchPolicy

__all__ = [
    "DALIGenericIterator",
    "GenericIterator",
    "LastBatchPolicy",
    "feedline_register_iterators",
]


def _import_jax() -> Any:
    try:
        import jax
        import jax.dlpack
        import jax.numpy
        import jax.sharding
    except ImportError as exc:
        raise ImportError("the JAX iterator needs JAX: pip install 'feedline[jax]'") from exc
    return jax


class GenericIterator(BaseIterator):
    """Batches as ``{name: jax.Array}`` (see :class:`~feedline.plugins.iterator.BaseIterator`).

    Args:
        sharding: a ``jax.sharding.Sharding`` to lay the pipelines' batches out with: one
            pipeline per addressable device, the global batch is ``devices * batch_size``.
        pmap_compatible: give even a single pipeline's batch the leading pipeline axis
            ``(1, batch, ...)`` (several pipelines always have it unless ``sharding`` is given).

    Every other argument is :class:`~feedline.plugins.iterator.BaseIterator`'s, except
    ``fill_last_batch`` (absent, as in DALI's JAX plugin).

    Raises:
        IteratorError: ``LastBatchPolicy.PARTIAL`` (shards of one array must have equal shapes).
        TypeError: ``sharding`` is not a ``jax.sharding.Sharding``.
    """

    framework = "JAX"
    ragged_hint = "read the samples with feedline.plugins.numpy.RaggedIterator"

    def __init__(
        self,
        pipelines: Any,
        output_map: Sequence[str],
        size: int = -1,
        reader_name: str | None = None,
        auto_reset: bool | str | None = False,
        last_batch_padded: bool = False,
        last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
        prepare_first_batch: bool = True,
        sharding: Any = None,
        pmap_compatible: bool | None = None,
    ) -> None:
        self._jax = jax = _import_jax()
        if last_batch_policy is LastBatchPolicy.PARTIAL:
            raise IteratorError(
                "the JAX iterator does not support LastBatchPolicy.PARTIAL (a jax.Array needs "
                "equal shards); use FILL or DROP"
            )
        if sharding is not None and not isinstance(sharding, jax.sharding.Sharding):
            raise TypeError(
                f"sharding must be a jax.sharding.Sharding, got {type(sharding).__name__}"
            )
        self._sharding = sharding
        self._pmap_compatible = bool(pmap_compatible)
        super().__init__(
            pipelines,
            output_map,
            size=size,
            reader_name=reader_name,
            auto_reset=auto_reset,
            last_batch_padded=last_batch_padded,
            last_batch_policy=last_batch_policy,
            prepare_first_batch=prepare_first_batch,
        )

    def _convert(self, batch: Any, name: str, pipe_index: int) -> Any:
        tensor = self._dense(batch, name, pipe_index)
        try:
            return self._jax.dlpack.from_dlpack(tensor)
        except (BufferError, TypeError, RuntimeError, ValueError) as exc:
            raise TypeError(
                f"output {name!r} of pipeline {pipe_index} (dtype {batch.dtype.name}, shape "
                f"{tensor.shape()}) cannot be handed to JAX through DLPack ({exc})"
            ) from exc

    def _assemble(self, batches: list[dict[str, Any]]) -> dict[str, Any]:
        if len(batches) == 1 and self._sharding is None and not self._pmap_compatible:
            return batches[0]
        return {name: self._combine(name, [b[name] for b in batches]) for name in self.output_map}

    def _combine(self, name: str, shards: list[Any]) -> Any:
        jax = self._jax
        shapes = [tuple(s.shape) for s in shards]
        if len(set(shapes)) > 1:
            raise RuntimeError(
                f"output {name!r}: the pipelines gave batches of different shapes {shapes}; "
                "one jax.Array needs shards of equal shape"
            )
        if self._sharding is not None:
            shape = (len(self._sharding.device_set) * shapes[0][0], *shapes[0][1:])
            devices = self._sharding_devices(shape)
            placed = [jax.device_put(s, d) for s, d in zip(shards, devices, strict=True)]
            return jax.make_array_from_single_device_arrays(shape, self._sharding, placed)
        devices = [next(iter(s.devices())) for s in shards]
        if len(set(devices)) < len(devices):
            local = jax.local_devices()
            if len(local) < len(shards):
                return jax.numpy.stack(shards)
            devices = local[: len(shards)]
        mesh = jax.sharding.Mesh(np.array(devices), ("device",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("device"))
        placed = [jax.device_put(s[None], d) for s, d in zip(shards, devices, strict=True)]
        return jax.make_array_from_single_device_arrays((len(shards), *shapes[0]), sharding, placed)

    def _sharding_devices(self, global_shape: tuple[int, ...]) -> list[Any]:
        """The sharding's addressable devices, in the order of their slice of the batch axis."""
        indices = self._sharding.addressable_devices_indices_map(global_shape)
        if len(indices) != len(self._pipes):
            raise IteratorError(
                f"sharding has {len(indices)} addressable devices but the iterator has "
                f"{len(self._pipes)} pipelines: give one pipeline per device"
            )

        def start(device: Any) -> int:
            index = indices[device]
            return (index[0].start or 0) if index else 0

        return sorted(indices, key=start)


DALIGenericIterator = GenericIterator


@hookimpl
def feedline_register_iterators(registry: Any) -> None:
    """Register the JAX iterator (JAX itself is imported only when one is created)."""
    registry.add_iterator("jax", "feedline.plugins.jax:GenericIterator")
