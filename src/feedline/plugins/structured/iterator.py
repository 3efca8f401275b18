"""``StructuredOutputIterator``: pipeline batches back as nested dicts (or ``SampleDataGroup``).

It wraps a framework iterator (by default feedline's PyTorch ``GenericIterator``) whose output
map is the blueprint's flat field names, and rebuilds the tree for every batch: leaves are
batched tensors, STRING leaves lists of ``str``. :meth:`StructuredOutputIterator.
CreateAsDataLoaderObject` makes an object that also passes ``isinstance(x, DataLoader)`` checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from feedline.plugins.structured.definition import definition_of
from feedline.plugins.structured.group_views import GroupViews
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.values import decode_string, flat_type, numpy_type
from feedline.types import DataType

__all__ = ["DALIStructuredOutputIterator", "SimpleIterator", "StructuredOutputIterator"]

#: ``(kind, payload, children)``: kind 0 a run of leaf names, 1 a string leaf, 2 a group.
_Plan = list[tuple[int, Any, Any]]


def _plan(group: GroupViews) -> _Plan:
    plan: _Plan = []
    for is_group, payload, _ in group._get_layout():
        if is_group:
            plan.append((2, payload, _plan(group._values[payload])))
            continue
        run: list[Any] = []
        for name in payload:
            if group._types[name] is DataType.STRING:
                if run:
                    plan.append((0, tuple(run), None))
                    run = []
                plan.append((1, name, None))
            else:
                run.append(name)
        if run:
            plan.append((0, tuple(run), None))
    return plan


def _to_dict(plan: _Plan, data: Sequence[Any], start: int = 0) -> tuple[dict[Any, Any], int]:
    """Nested dicts of the flat ``data`` from ``start``; returns them and the next index."""
    out: dict[Any, Any] = {}
    for kind, payload, children in plan:
        if kind == 0:
            for name in payload:
                out[name] = data[start]
                start += 1
        elif kind == 1:
            out[payload] = decode_string(data[start])
            start += 1
        else:
            out[payload], start = _to_dict(children, data, start)
    return out, start


def _dtype_name(value: Any) -> str | None:
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).rsplit(".", 1)[-1]


class StructuredOutputIterator:
    """Iterates over a structured pipeline's batches as nested dicts of tensors.

    Usable where a ``torch.utils.data.DataLoader`` is expected (see
    :meth:`CreateAsDataLoaderObject`). Iterators made by ``iter()`` share this object's state;
    each ``iter()`` calls :meth:`reset`, so ``for batch in loader:`` runs one epoch.

    Args:
        num_batches_in_epoch: what ``len()`` returns; ``None`` takes the input's ``length``
            from the :class:`PipelineDefinition` that created ``pipeline``.
        pipeline: the pipeline (from :meth:`PipelineDefinition.get_dali_pipeline`).
        sample_data_structure_blueprint: the output format
            (:meth:`PipelineDefinition.check_and_get_output_data_structure`).
        contained_dataset: returned by :attr:`dataset` (as ``DataLoader.dataset``).
        dali_generic_iterator_class: the inner iterator class, called as
            ``cls(pipeline, output_map)``; PyTorch's ``GenericIterator`` by default.
        convert_sample_data_group_to_dict: return nested dicts (else ``SampleDataGroup``).
        post_process_func: applied to every batch on the consuming thread (keep it light).
    """

    def __init__(
        self,
        num_batches_in_epoch: int | None,
        pipeline: Any,
        sample_data_structure_blueprint: SampleDataGroup,
        contained_dataset: Any = None,
        dali_generic_iterator_class: Any = None,
        convert_sample_data_group_to_dict: bool = True,
        post_process_func: Callable[[Any], Any] | None = None,
    ) -> None:
        if not isinstance(sample_data_structure_blueprint, SampleDataGroup):
            raise TypeError(
                "StructuredOutputIterator: sample_data_structure_blueprint must be a "
                f"SampleDataGroup, got {type(sample_data_structure_blueprint).__name__}"
            )
        if num_batches_in_epoch is None:
            definition = definition_of(pipeline)
            num_batches_in_epoch = definition.length if definition is not None else None
        elif (
            isinstance(num_batches_in_epoch, bool)
            or not isinstance(num_batches_in_epoch, int | np.integer)
            or num_batches_in_epoch < 0
        ):
            raise ValueError(
                "StructuredOutputIterator: num_batches_in_epoch must be an int >= 0 or None, "
                f"got {num_batches_in_epoch!r}"
            )
        if post_process_func is not None and not callable(post_process_func):
            raise TypeError("StructuredOutputIterator: post_process_func must be callable")
        if dali_generic_iterator_class is None:
            from feedline.plugins.pytorch import GenericIterator

            dali_generic_iterator_class = GenericIterator
        blueprint = sample_data_structure_blueprint.get_empty_like_self()
        self._num_batches = num_batches_in_epoch
        self._blueprint = blueprint
        self._names = blueprint.field_names_flat
        self._expected = [
            np.dtype(numpy_type(flat_type(t))).name for t in blueprint.field_types_flat
        ]
        self._plan = _plan(blueprint)
        self._dataset = contained_dataset
        self._to_dict = bool(convert_sample_data_group_to_dict)
        self._post = post_process_func
        definition = definition_of(pipeline)
        # ``check_data_format=False`` turns every element-type check off, this one included.
        self._checks_types = definition is None or definition.checks_data_format
        self._check_types = self._checks_types
        self._inner = dali_generic_iterator_class(pipeline, list(self._names))

    def _check(self, values: list[Any]) -> None:
        for name, value, expected in zip(self._names, values, self._expected, strict=True):
            actual = _dtype_name(value)
            if actual is not None and actual != expected:
                raise TypeError(
                    f"pipeline output field {name!r} has type {actual}, but the blueprint "
                    f"declares {expected}"
                )
        self._check_types = False

    def __next__(self) -> Any:
        batch = self._inner.__next__()[0]
        values = [batch[name] for name in self._names]
        if self._check_types:
            self._check(values)
        if self._to_dict:
            result: Any = _to_dict(self._plan, values)[0]
        else:
            result = self._blueprint.get_like_self_filled(values)
        return self._post(result) if self._post is not None else result

    next = __next__

    def __iter__(self) -> SimpleIterator:
        return SimpleIterator(self)

    def reset(self) -> None:
        """Start over at the next epoch (iterators made by ``iter()`` follow)."""
        self._inner.reset()
        self._check_types = self._checks_types

    def __len__(self) -> int:
        if self._num_batches is None:
            raise TypeError(
                "len() is unknown: the input reports no length; pass num_batches_in_epoch"
            )
        return int(self._num_batches)

    @property
    def sample_data_structure_blueprint(self) -> SampleDataGroup:
        """The output format (a copy)."""
        return self._blueprint.get_empty_like_self()

    @property
    def internal_iterator(self) -> Any:
        """The framework iterator that reads the flat outputs."""
        return self._inner

    @property
    def dataset(self) -> Any:
        """``contained_dataset`` if one was given, else this object (as ``DataLoader.dataset``)."""
        return self._dataset if self._dataset is not None else self

    @property
    def batch_size(self) -> int:
        """Samples per batch (as ``DataLoader.batch_size``)."""
        return int(self._inner.batch_size)

    @classmethod
    def CreateAsDataLoaderObject(cls, *args: Any, **kwargs: Any) -> StructuredOutputIterator:
        """An instance that is also a ``torch.utils.data.DataLoader`` for ``isinstance`` checks.

        Arguments as the constructor. ``DataLoader``'s own machinery is never set up: reading a
        ``DataLoader`` attribute that this class does not provide raises ``AttributeError``
        naming it.
        """
        from torch.utils.data import DataLoader

        loader_class = _data_loader_class(cls, DataLoader)
        instance = object.__new__(loader_class)
        cls.__init__(instance, *args, **kwargs)
        return instance


DALIStructuredOutputIterator = StructuredOutputIterator


class SimpleIterator:
    """The iterator ``iter(loader)`` returns; it shares (and on creation resets) the state of
    its :class:`StructuredOutputIterator`."""

    def __init__(self, obj: StructuredOutputIterator) -> None:
        self._obj = obj
        obj.reset()

    def __next__(self) -> Any:
        return self._obj.__next__()

    def __iter__(self) -> SimpleIterator:
        return self

    def reset(self) -> None:
        """Reset the parent iterator."""
        self._obj.reset()

    def __len__(self) -> int:
        return len(self._obj)


StructuredOutputIterator.SimpleIterator = SimpleIterator  # type: ignore[attr-defined]

_LOADER_CLASSES: dict[tuple[type, type], type] = {}


def _data_loader_class(cls: type, loader: type) -> type:
    key = (cls, loader)
    if key in _LOADER_CLASSES:
        return _LOADER_CLASSES[key]
    own = {name for klass in cls.__mro__ for name in vars(klass)}
    declared = {
        name
        for klass in loader.__mro__
        if klass is not object
        for name in (*vars(klass), *getattr(klass, "__annotations__", {}))
    }
    blocked = frozenset(
        declared - own - {"__dict__", "__weakref__", "__module__", "__doc__", "__annotations__"}
    )

    def __getattribute__(self: Any, name: str) -> Any:
        if name in blocked:
            raise AttributeError(
                f"{name!r} is a DataLoader attribute that {cls.__name__} does not provide "
                "(it only stands in for a DataLoader)"
            )
        return object.__getattribute__(self, name)

    created = type(
        f"{cls.__name__}AsDataLoader",
        (cls, loader),
        {
            "__getattribute__": __getattribute__,
            "__setattr__": object.__setattr__,
            "__module__": cls.__module__,
            "__init__": cls.__init__,
        },
    )
    _LOADER_CLASSES[key] = created
    return created
