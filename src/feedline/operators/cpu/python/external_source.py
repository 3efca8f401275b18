"""The ``external_source`` kernel: data from Python callables, iterables or ``feed_input``."""

from __future__ import annotations

import threading
import warnings
from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np

from feedline.core.buffers import BufferPool
from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import BatchInfo, DataType, SampleInfo, from_numpy_dtype
from feedline.operators.cpu.python.schemas import CYCLE_MODES, classify_source
from feedline.operators.cpu.python.source_data import (
    as_samples,
    check_layout_ndims,
    data_layout,
    type_name,
)

__all__ = ["ExternalSourceKernel"]


def _per_output(value: Any, count: int, what: str, name: str) -> list[Any]:
    if isinstance(value, list | tuple) and not isinstance(value, str):
        if len(value) != count:
            raise ValueError(f"{what}: {name} has {len(value)} entries for {count} outputs")
        return list(value)
    return [value] * count


class ExternalSourceKernel(Kernel):
    """Produces one batch per iteration from the configured source."""

    def setup(self) -> None:
        args = self.args
        self._what = f"external_source {self.ctx.name!r}"
        self._num_outputs = args["num_outputs"]
        count = self._num_outputs or 1
        if self._num_outputs is not None and self._num_outputs < 1:
            raise ValueError(f"{self._what}: num_outputs must be >= 1")
        self._layouts = _per_output(args["layout"], count, self._what, "layout")
        self._dtypes = _per_output(args["dtype"], count, self._what, "dtype")
        self._ndims = _per_output(args["ndim"], count, self._what, "ndim")
        for dtype in self._dtypes:
            if dtype is not None and not isinstance(dtype, DataType):
                raise TypeError(f"{self._what}: dtype must be a types.DataType, got {dtype!r}")
        self._parallel = args["parallel"]
        self._batch = args["batch"] if args["batch"] is not None else not self._parallel
        self._cycle = CYCLE_MODES.get(args["cycle"], "no")
        self._kind, self._arity = classify_source(args["source"], args["cycle"], self._what)
        self._no_copy = args["no_copy"] or self._parallel
        self._buffers = BufferPool()
        self._fed: deque[list[TensorListCPU]] = deque()
        self._fed_per_output: list[deque[TensorListCPU]] = [deque() for _ in range(count)]
        self._needed = sorted(
            range(count) if self.ctx.used_outputs is None else self.ctx.used_outputs
        )
        self._fed_signal = threading.Condition()
        self._aborted = False
        self._previous: list[tuple[DataType, int, str] | None] = [None] * count
        check_layout_ndims(self._layouts, self._ndims)
        self._last_fed: list[TensorListCPU] | None = None
        self._iteration = 0
        self._scheduled = 0  # parallel: the next iteration to hand to the workers
        self._epoch_idx = 0
        self._iterator: Iterator[Any] | None = None
        self._exhausted = False
        if self._kind == "iterable":
            self._iterator = iter(args["source"])
        elif self._kind == "generator_function":
            self._iterator = args["source"]()
        self._pool_source: int | None = None
        if self._parallel:
            self._setup_parallel()
        # Callbacks run (parallel ones: are collected from the workers) on the thread that
        # schedules the iteration, as in DALI: every source takes its batch of an iteration
        # even when another source ended the data in it.
        self.fetches_input = self._kind != "push"
        if self._kind != "push" and len(self._needed) < count:
            self._warn_unused_outputs(count)
        self._fetched: dict[int, list[TensorListCPU]] = {}
        self._warn_if_not_restorable()

    def _warn_if_not_restorable(self) -> None:
        """DALI's warning: a checkpoint restores callables that take the sample or batch index
        (they are called again from the saved position); other sources keep no state."""
        pipeline = self.ctx.pipeline
        if self._kind == "push" or not getattr(pipeline, "enable_checkpointing", False):
            return
        if self._kind == "callable" and self._arity:
            return
        kinds = {
            "callable": "parameterless callable",
            "generator_function": "a generator function",
            "iterable": "an iterable",
        }
        reason = f"with {kinds[self._kind]} as a 'source'"
        warnings.warn(
            f"Checkpointing enabled in a pipeline with external source operator, {reason}. "
            "DALI doesn't capture state of such 'source'. When loading the checkpoint, the "
            "'source' must be manually adjusted by the user to start from the correct point, "
            "otherwise it will start from the beginning, potentially leading to mismatch with "
            f"other data sources ({self._what}).",
            stacklevel=2,
        )

    def restore_position(self, epoch_idx: int, iteration: int) -> None:
        """Continue from a checkpoint: the next batch is ``iteration`` of epoch ``epoch_idx``
        (what a callable taking the sample or batch index is asked for next)."""
        self._epoch_idx = epoch_idx
        self._iteration = self._scheduled = iteration

    def _warn_unused_outputs(self, count: int) -> None:
        """DALI's warning: the source computes outputs that nothing in the graph reads."""
        source = str(self.args["source"])
        if len(source) > 103:
            source = source[:100] + "..."
        unused = [i for i in range(count) if i not in self._needed]
        listed = ", ".join(map(str, unused))
        which = (
            f"outputs at the indices {listed} are"
            if len(unused) > 1
            else f"output at the index {listed} is"
        )
        warnings.warn(
            f"The external source node '{source}' produces {count} outputs, but the {which} not "
            "used. For best performance, adjust your callback so that it computes only the "
            "needed outputs.",
            Warning,
            stacklevel=2,
        )

    def _setup_parallel(self) -> None:
        pipeline = self.ctx.pipeline
        if self._kind == "push":
            raise ValueError(f"{self._what}: parallel=True needs a source")
        workers = None if pipeline is None else pipeline.py_num_workers
        if not workers:
            raise RuntimeError(
                f"{self._what}: the pipeline contains `fn.external_source` with `parallel` "
                f"argument specified to True. However, the `py_num_workers` was set to "
                f"`{workers}`. The external source cannot run in parallel mode without Python "
                "workers pool; give the Pipeline a positive py_num_workers or set parallel=False"
            )
        from feedline.core.workers import WorkerPool

        if pipeline.py_pool is None:
            pipeline.py_pool = WorkerPool(
                pipeline.py_num_workers,
                pipeline.py_start_method,
                callback_pickler=pipeline.py_callback_pickler,
            )
        pool = pipeline.py_pool
        self._pool_source = id(self)
        mode = (
            "sample" if not self._batch else ("batch" if self._kind == "callable" else "iterable")
        )
        pool.add_source(
            self._pool_source,
            self.args["source"],
            kind=mode,
            prefetch=self.args["prefetch_queue_depth"] or 1,
            num_outputs=self._num_outputs,
            cycle=self._cycle,
            batch_size=self.ctx.batch_size,
            bytes_per_sample=sum(hint) if (hint := self.args["bytes_per_sample_hint"]) else None,
        )

    def reset_epoch(self, epoch_idx: int) -> None:
        """Start a new epoch: counters restart, cycling sources rewind.

        A parallel iterable keeps the batches its worker computed ahead (as DALI does): they
        are the iterable's next items whichever source ended the epoch. If the iterable itself
        ended, its scheduled batches were already dropped when the end was received.
        """
        ahead = self._scheduled - self._iteration if self._keeps_prefetch() else 0
        self._epoch_idx = epoch_idx
        self._iteration, self._scheduled = 0, ahead
        if self._pool_source is not None and not self._keeps_prefetch():
            self.ctx.pipeline.py_pool.reset(self._pool_source)

    def _keeps_prefetch(self) -> bool:
        """Whether a reset keeps this source's batches computed ahead by the workers."""
        return self._pool_source is not None and self._batch and self._kind != "callable"

    def feed(
        self, data: Any, layout: str | None = None, output_index: int | None = None, **_: Any
    ) -> None:
        """Queue one batch (push mode).

        With ``num_outputs``, ``data`` holds one batch per output; or, when ``output_index``
        is given (the fed node is one output, as DALI feeds each output of a multi-output
        external source on its own), the batch of that output alone. An iteration then runs
        when every output the graph reads was fed.

        Raises:
            RuntimeError: the source has a ``source`` (DALI refuses to feed it too).
        """
        if self._kind != "push":
            raise RuntimeError(
                f"Cannot use feed_input on {self._what}: it was created with a `source`"
            )
        if self._num_outputs is not None and output_index is not None:
            batch = self._to_batch(data, output_index, layout or self._layouts[output_index])
            with self._fed_signal:
                self._fed_per_output[output_index].append(batch)
                self._fed_signal.notify_all()
            return
        outputs = data if self._num_outputs is not None else (data,)
        if self._num_outputs is not None and len(outputs) != self._num_outputs:
            raise ValueError(f"{self._what}: expected {self._num_outputs} outputs to be fed")
        layouts = [layout] * len(outputs) if layout is not None else self._layouts
        batches = [self._to_batch(out, index, layouts[index]) for index, out in enumerate(outputs)]
        with self._fed_signal:
            self._fed.append(batches)
            self._fed_signal.notify_all()

    def abort(self) -> None:
        """Wake a ``blocking`` wait for fed data: the pipeline is closing."""
        with self._fed_signal:
            self._aborted = True
            self._fed_signal.notify_all()

    def fetch_input(self) -> list[TensorListCPU]:
        """Call the source for its next iteration and convert (copy) the batch.

        A parallel source's worker failure is raised here, when the iteration that needs it is
        scheduled (as in DALI), like a failure of a callback run on this thread.

        Raises:
            StopIteration: the source ended (its iteration counter restarts at 0).
        """
        try:
            raw = self._fetch()
        except StopIteration:
            self._iteration = 0
            raise
        except Exception as error:
            if self._pool_source is None:
                raise
            # Without the pool's frames: they would hold the failure again, a cycle that keeps
            # the pool and its workers alive after the caller dropped the error.
            raise error.with_traceback(None) from error.__cause__
        self._iteration += 1
        return self._convert(raw)

    def accept_input(self, iteration: int, data: list[TensorListCPU]) -> None:
        self._fetched[iteration] = data

    def drop_inputs(self) -> None:
        self._fetched.clear()

    def run(self, batch: Batch) -> list[TensorListCPU]:
        if self._kind == "push":
            return self._pop_fed()
        try:
            return self._fetched.pop(batch.iteration)
        except KeyError:
            raise RuntimeError(
                f"{self._what}: iteration {batch.iteration} was not scheduled"
            ) from None

    def _has_fed(self) -> bool:
        return bool(self._fed) or (
            bool(self._needed) and all(self._fed_per_output[i] for i in self._needed)
        )

    def _pop_fed(self) -> list[TensorListCPU]:
        with self._fed_signal:
            if self.args["blocking"] and not self._has_fed():
                self._fed_signal.wait_for(lambda: self._has_fed() or self._aborted)
            if not self._has_fed() and self._aborted:
                raise RuntimeError(f"{self._what}: the pipeline closed while waiting for data")
            if self._fed:
                self._last_fed = self._fed.popleft()
                return self._last_fed
            if self._has_fed():
                self._last_fed = self._pop_per_output()
                return self._last_fed
        if self.args["repeat_last"] and self._last_fed is not None:
            return self._last_fed
        raise RuntimeError(
            f"{self._what}: no data was fed for this iteration; call "
            f"Pipeline.feed_input({self.ctx.name!r}, batch) before running"
        )

    def _pop_per_output(self) -> list[TensorListCPU]:
        """One iteration of outputs fed one by one; an output nothing reads repeats a read one
        (it is never looked at)."""
        popped = {i: self._fed_per_output[i].popleft() for i in self._needed}
        filler = popped[self._needed[0]]
        return [popped.get(i, filler) for i in range(len(self._fed_per_output))]

    def _fetch(self) -> Any:
        if self._pool_source is not None:
            return self._fetch_parallel()
        source = self.args["source"]
        iteration, epoch = self._iteration, self._epoch_idx
        bs = self.ctx.batch_size
        if self._kind != "callable":
            if not self._batch:
                return [self._next_from_iterable() for _ in range(bs)]
            return self._next_from_iterable()
        if not self._batch:
            if self._arity == 0:
                return [source() for _ in range(bs)]
            return [source(SampleInfo(iteration * bs + i, i, iteration, epoch)) for i in range(bs)]
        if self._arity == 0:
            return source()
        return source(BatchInfo(iteration, epoch) if self.args["batch_info"] else iteration)

    def _fetch_parallel(self) -> Any:
        """This iteration's batch from the workers, keeping ``prefetch_queue_depth`` batches
        computed ahead as DALI does: so every parallel source reaches the end of its data in
        the iteration where it ends, even when another source ended that iteration first."""
        pool = self.ctx.pipeline.py_pool
        depth = self.args["prefetch_queue_depth"] or 1
        self._scheduled = max(self._scheduled, self._iteration)
        while self._scheduled < self._iteration + depth:
            pool.schedule(self._pool_source, self._task(self._scheduled))
            self._scheduled += 1
        try:
            batch = pool.receive(self._pool_source)
        except StopIteration:
            if self._keeps_prefetch():
                pool.reset(self._pool_source)
                self._scheduled = 0  # fetch_input restarts the iteration counter too
            raise
        pool.schedule(self._pool_source, self._task(self._scheduled))
        self._scheduled += 1
        return batch

    def _task(self, iteration: int) -> Any:
        from feedline.core.workers import BatchTask, SampleBatchTask

        epoch, bs = self._epoch_idx, self.ctx.batch_size
        if not self._batch:
            return SampleBatchTask(
                [SampleInfo(iteration * bs + i, i, iteration, epoch) for i in range(bs)]
            )
        return BatchTask(BatchInfo(iteration, epoch) if self.args["batch_info"] else iteration)

    def _next_from_iterable(self) -> Any:
        """The iterator's next item. Without cycling the same iterator is asked again after it
        ended (as DALI does: an exhausted generator keeps ending, an iterator that rewinds
        itself when it ends gives its data again in the next epoch)."""
        assert self._iterator is not None
        if self._exhausted:
            self._restart()
        try:
            return next(self._iterator)
        except StopIteration:
            if self._cycle == "quiet":
                self._restart()
                return next(self._iterator)
            self._exhausted = self._cycle == "raise"
            raise

    def _restart(self) -> None:
        source = self.args["source"]
        self._iterator = source() if self._kind == "generator_function" else iter(source)
        self._exhausted = False

    def _convert(self, raw: Any) -> list[TensorListCPU]:
        count = self._num_outputs
        if not self._batch and self._pool_source is None:
            samples = raw
            if count is not None:
                for s in samples:
                    if not isinstance(s, tuple | list | np.ndarray) or len(s) != count:
                        raise ValueError(
                            f"{self._what}: each sample must hold {count} outputs "
                            "(a tuple, list or array)"
                        )
                per_output = [[s[i] for s in samples] for i in range(count)]
            else:
                per_output = [samples]
        elif count is not None:
            if not isinstance(raw, tuple | list | np.ndarray) or len(raw) != count:
                raise ValueError(
                    f"{self._what}: the source must return {count} batches "
                    "(a tuple, list or array), got "
                    f"{type(raw).__name__}"
                )
            per_output = list(raw)
        else:
            per_output = [raw]
        return [
            self._to_batch(data, index, self._layouts[index])
            for index, data in enumerate(per_output)
        ]

    def _to_batch(self, data: Any, index: int, layout: str | None) -> TensorListCPU:
        what = self._what if self._num_outputs is None else f"{self._what} output {index}"
        if not layout:
            layout = data_layout(data)
        try:
            samples = as_samples(data, self._no_copy, self._buffers)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{what}: {exc}") from None
        size = len(samples)
        if size == 0:
            raise ValueError(f"{what}: the batch is empty")
        if size > self.ctx.batch_size:
            raise RuntimeError(
                f"{what}: the batch has {size} samples, more than the pipeline's batch size "
                f"{self.ctx.batch_size}"
            )
        if isinstance(samples, np.ndarray):
            if samples.ndim == 0:
                raise ValueError(f"{what}: a batch needs an outer (sample) dimension")
            tl = TensorListCPU.from_dense(np.ascontiguousarray(samples), layout or "")
        else:
            ndims = {s.ndim for s in samples}
            dtypes = {s.dtype for s in samples}
            if len(ndims) > 1 or len(dtypes) > 1:
                raise ValueError(
                    f"{what}: samples must share ndim and dtype, got ndims {sorted(ndims)} and "
                    f"dtypes {sorted(map(str, dtypes))}"
                )
            tl = TensorListCPU.from_samples(samples, layout or "")
        from_numpy_dtype(tl.numpy_dtype)
        expected_dtype, expected_ndim = self._dtypes[index], self._ndims[index]
        if expected_dtype is not None and tl.dtype != expected_dtype:
            raise RuntimeError(
                f"{what}: ExternalSource expected data of type {type_name(expected_dtype)} and "
                f"got: {type_name(tl.dtype)}"
            )
        if expected_ndim is not None and tl.ndim != expected_ndim:
            raise RuntimeError(
                f"{what}: ExternalSource expected data with {expected_ndim} dimensions and got "
                f"{tl.ndim} dimensions"
            )
        expected_layout = self._layouts[index]
        if expected_layout and layout != expected_layout:
            raise RuntimeError(
                f'{what}: Expected data with layout: "{expected_layout}" and got: "{layout}"'
            )
        if layout and len(layout) != tl.ndim:
            raise ValueError(
                f"{what}: layout {layout!r} has {len(layout)} dims, the samples have {tl.ndim}"
            )
        self._check_unchanged(what, index, (tl.dtype, tl.ndim, layout or ""))
        return tl

    def _check_unchanged(self, what: str, index: int, now: tuple[DataType, int, str]) -> None:
        """DALI's rule: type, dimensionality and layout of an output stay those of the first
        batch.

        Raises:
            RuntimeError: one of them changed, with the previous and current value.
        """
        before = self._previous[index]
        self._previous[index] = now
        if before is None or before == now:
            return
        (old_type, old_ndim, old_layout), (new_type, new_ndim, new_layout) = before, now
        if old_type != new_type:
            raise RuntimeError(
                f"{what}: Type of the data fed to the external source has changed from the "
                f"previous iteration. Type in the previous iteration was {type_name(old_type)} "
                f"and the current type is {type_name(new_type)}."
            )
        if old_ndim != new_ndim:
            raise RuntimeError(
                f"{what}: Number of dimensions of the data fed to the external source has changed "
                f"from previous iteration. Dimensionality in the previous iteration was "
                f"{old_ndim} and the current is {new_ndim}."
            )
        raise RuntimeError(
            f"{what}: Layout of the data fed to the external source has changed from previous "
            f'iteration. Layout in the previous iteration was "{old_layout}" and the current is '
            f'"{new_layout}".'
        )

    def close(self) -> None:
        self._fed.clear()
        for queue in self._fed_per_output:
            queue.clear()
        self._fetched.clear()
