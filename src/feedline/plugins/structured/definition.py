"""``PipelineDefinition``: an input callable/iterable plus a list of steps, made into a pipeline.

The input's blueprint is flattened into one ``external_source`` with an output per leaf (strings
as uint8), the outputs are put back into the tree, the steps run in order on that tree, strings
are padded to a uniform length, and the flattened result becomes the pipeline's outputs. Formats
are checked while the graph is defined: a step whose input does not fit, a step whose output
differs from what it declared, and a graph node of the wrong element type all fail in
:meth:`PipelineDefinition.get_dali_pipeline`, naming the field, before any batch runs.
"""

from __future__ import annotations

import inspect
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

from feedline.core.graph import DataNode
from feedline.plugins.structured.inputs import CallableBase, IterableBase
from feedline.plugins.structured.passthrough_copy import InsertCopyForPassthrough
from feedline.plugins.structured.paths import Name, Path, format_path
from feedline.plugins.structured.sample_data_group import SampleDataGroup
from feedline.plugins.structured.steps.base import FormatError, PipelineStepBase

__all__ = ["PipelineDefinition", "definition_of"]

_BUILT_BY: weakref.WeakKeyDictionary[Any, PipelineDefinition] = weakref.WeakKeyDictionary()


def definition_of(pipeline: Any) -> PipelineDefinition | None:
    """The definition that created ``pipeline`` (through :meth:`get_dali_pipeline`), if any."""
    return _BUILT_BY.get(pipeline)


class _Reiterable:
    """Hands an :class:`IterableBase` to the external source as a collection it may restart."""

    def __init__(self, iterable: IterableBase) -> None:
        self.iterable = iterable

    def __iter__(self) -> Any:
        return iter(self.iterable)


class PipelineDefinition:
    """A structured pipeline: where samples come from and the steps they go through.

    Args:
        data_loading_callable_iterable: a :class:`CallableBase` (per sample, may run in worker
            processes) or an :class:`IterableBase` (per batch).
        preprocess_functors: the steps, in order; ``None`` entries are skipped.
        check_data_format: check the element type of every graph node assigned to a field
            (while the graph is defined: no cost per batch).
        use_parallel_external_source: load samples in worker processes (``py_num_workers``).
        prefetch_queue_depth: batches the workers prepare ahead (parallel loading only).
        print_sample_data_group_format: print the format before and after every step when the
            pipeline is created.
        copy_external_source_passthrough_outputs: put ``fn.copy`` on output leaves (ACCV-Lab's
            workaround for a DALI defect feedline does not have; kept so ported pipelines keep
            their meaning). ``None`` (default) warns and copies every output, ``True`` copies the
            selected outputs (every output without selectors), ``False`` copies none.
        passthrough_copy_field_names: output leaves to copy, by name.
        passthrough_copy_field_names_scope_paths: groups that restrict the names.
        passthrough_copy_branch_paths: output paths to copy (a group: every leaf under it).

    Raises:
        ValueError: copy selectors without ``copy_external_source_passthrough_outputs=True``.
    """

    def __init__(
        self,
        data_loading_callable_iterable: CallableBase | IterableBase,
        preprocess_functors: Sequence[PipelineStepBase | None] | None = None,
        check_data_format: bool = True,
        use_parallel_external_source: bool = True,
        prefetch_queue_depth: int = 2,
        print_sample_data_group_format: bool = False,
        copy_external_source_passthrough_outputs: bool | None = None,
        passthrough_copy_field_names: Sequence[Name] | None = None,
        passthrough_copy_field_names_scope_paths: Sequence[Path] | None = None,
        passthrough_copy_branch_paths: Sequence[Path] | None = None,
    ) -> None:
        source = data_loading_callable_iterable
        if not isinstance(source, CallableBase | IterableBase):
            raise TypeError(
                "PipelineDefinition: data_loading_callable_iterable must be a CallableBase or "
                f"an IterableBase, got {type(source).__name__}"
            )
        functors = list(preprocess_functors or ())
        steps = [s for s in functors if s is not None]
        for index, step in enumerate(functors):
            if step is not None and not isinstance(step, PipelineStepBase):
                raise TypeError(
                    f"PipelineDefinition: preprocess_functors[{index}] is a "
                    f"{type(step).__name__}, not a PipelineStepBase"
                )
        if (
            isinstance(prefetch_queue_depth, bool)
            or not isinstance(prefetch_queue_depth, int)
            or prefetch_queue_depth < 1
        ):
            raise ValueError(
                f"PipelineDefinition: prefetch_queue_depth must be an int >= 1, got "
                f"{prefetch_queue_depth!r}"
            )
        self._source = source
        self._steps = steps
        self._check = bool(check_data_format)
        self._parallel = bool(use_parallel_external_source)
        self._prefetch = prefetch_queue_depth
        self._print = bool(print_sample_data_group_format)
        selectors = {
            "field_names": passthrough_copy_field_names,
            "field_names_scope_paths": passthrough_copy_field_names_scope_paths,
            "branch_paths": passthrough_copy_branch_paths,
        }
        given = {k: v for k, v in selectors.items() if v is not None}
        if given and copy_external_source_passthrough_outputs is not True:
            raise ValueError(
                "PipelineDefinition: the passthrough_copy_* selectors need "
                "copy_external_source_passthrough_outputs=True (got "
                f"{copy_external_source_passthrough_outputs!r})"
            )
        if copy_external_source_passthrough_outputs is None:
            warnings.warn(
                "PipelineDefinition: Copying all final pipeline outputs by default "
                "(copy_external_source_passthrough_outputs=None); pass False to skip the copies "
                "(feedline does not need them) or True to select outputs",
                UserWarning,
                stacklevel=2,
            )
        self._copy: dict[str, Any] | None = (
            None if copy_external_source_passthrough_outputs is False else given
        )

    @property
    def input_data_structure(self) -> SampleDataGroup:
        """The input blueprint, as the loading callable/iterable reports it."""
        blueprint = self._source.used_sample_data_structure
        if not isinstance(blueprint, SampleDataGroup):
            raise TypeError(
                f"{type(self._source).__name__}.used_sample_data_structure returned "
                f"{type(blueprint).__name__}, not a SampleDataGroup"
            )
        return blueprint.get_empty_like_self()

    @property
    def checks_data_format(self) -> bool:
        """Whether element types are checked (``check_data_format``)."""
        return self._check

    @property
    def length(self) -> int | None:
        """Batches per epoch, as the loading callable/iterable reports it."""
        return self._source.length

    def check_and_get_output_data_structure(self) -> SampleDataGroup:
        """The output blueprint: every step's declared format applied in turn (nothing runs).

        Raises:
            FormatError: a step does not accept the format before it (the message names the
                step and the field).
        """
        data_format = self.input_data_structure
        for index, step in enumerate(self._steps):
            try:
                data_format = step.check_input_data_format_and_set_output_data_format(data_format)
            except FormatError as exc:
                raise type(exc)(f"step {index} ({step!r}) does not fit its input: {exc}") from exc
        self._copy_plan(data_format)
        return data_format

    def _copy_plan(self, output_format: SampleDataGroup) -> InsertCopyForPassthrough | None:
        if self._copy is None:
            return None
        try:
            return InsertCopyForPassthrough(output_format, **self._copy)
        except ValueError as exc:
            raise ValueError(
                f"Invalid pass-through output copy configuration for final output format: {exc}"
            ) from exc

    def _define(self) -> tuple[Any, ...]:
        from feedline import fn

        blueprint = self.input_data_structure
        blueprint.set_apply_mapping(False)
        blueprint.set_do_check_type(self._check)
        types = list(blueprint.field_types_flat)
        if not types:
            raise FormatError("PipelineDefinition: the input format has no data fields")
        per_sample = callable(self._source)
        source: Any = self._source if per_sample else _Reiterable(self._source)  # type: ignore[arg-type]
        kwargs: dict[str, Any] = {
            "source": source,
            "num_outputs": len(types),
            "dtype": types,
            "batch": not per_sample,
            "parallel": self._parallel,
        }
        if self._parallel:
            kwargs["prefetch_queue_depth"] = self._prefetch
        if not per_sample:
            kwargs["cycle"] = "raise"
        outputs = fn.external_source(**kwargs)
        blueprint.set_data(outputs if isinstance(outputs, list) else [outputs])
        data = blueprint
        if self._print:
            print(f"input format:\n{data.get_string_no_details()}")
        for index, step in enumerate(self._steps):
            try:
                data = step(data)
            except FormatError as exc:
                raise type(exc)(f"step {index} ({step!r}): {exc}") from exc
            except TypeError as exc:
                exc.add_note(f"while adding step {index} ({step!r}) to the graph")
                raise
            if self._print:
                print(f"format after {step!r}:\n{data.get_string_no_details()}")
        for path, value, _ in data.leaves():
            if not isinstance(value, DataNode):
                raise FormatError(
                    f"field {format_path(path)!r} holds {type(value).__name__}, not a graph node: "
                    "a step changed its type without assigning new data"
                )
        data.ensure_uniform_size_in_batch_for_all_strings()
        declared = self.check_and_get_output_data_structure()
        copy = self._copy_plan(declared)
        if copy is not None:
            data = copy(data)
        difference = declared.describe_difference(data)
        if difference is not None:
            raise FormatError(f"the pipeline output differs from the declared format: {difference}")
        return tuple(data.get_data())

    def get_dali_pipeline(self, *args: Any, **kwargs: Any) -> Any:
        """Create the pipeline (a :class:`feedline.Pipeline`, not yet built).

        Args:
            *args: positional ``Pipeline`` arguments (``batch_size``, ``num_threads``,
                ``device_id``, ``seed``, ...).
            **kwargs: keyword ``Pipeline`` arguments (``py_num_workers``, ``py_start_method``,
                ``prefetch_queue_depth`` of the pipeline itself, ...).

        Raises:
            FormatError: a format or element type does not fit (naming the step and the field).
        """
        from feedline import Pipeline, pipeline_def

        params = inspect.signature(Pipeline.__init__).parameters.values()
        names = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD][1:]
        if len(args) > len(names):
            raise TypeError(f"get_dali_pipeline: too many positional arguments ({len(args)})")
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                raise TypeError(f"get_dali_pipeline: {name!r} given twice")
            kwargs[name] = value
        self.check_and_get_output_data_structure()
        pipe = pipeline_def(self._define)(**kwargs)
        _BUILT_BY[pipe] = self
        return pipe

    get_pipeline = get_dali_pipeline

    def __repr__(self) -> str:
        steps = ", ".join(repr(s) for s in self._steps)
        return f"PipelineDefinition({type(self._source).__name__}, [{steps}])"
