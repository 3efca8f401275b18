"""``experimental.numba_function``: DALI's operator whose kernel is a Numba-compiled function.

``run_fn`` and ``setup_fn`` are compiled with ``numba.njit`` when the pipeline is built
(``run_fn`` with ``nogil=True``, so samples run in parallel on the thread pool). Per batch,
``setup_fn(out_shapes, in_shapes)`` may write the output shapes (one ``(samples, ndim)`` int64
array per output and per input, in Numba typed lists); without it each output takes the shape
of the input at its position. Then ``run_fn(*outputs, *inputs)`` fills uninitialised outputs:
once per sample, or once per batch with a typed list of sample arrays per output and input.
Numba is the optional ``numba`` extra, imported only here.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from feedline.core.kernel import Batch, Kernel
from feedline.core.tensor import TensorListCPU
from feedline.core.types import to_numpy_dtype
from feedline.operators.cpu.python.schemas import as_list

__all__ = ["NumbaFunctionKernel", "import_numba"]

_OP = "numba_function"


def import_numba() -> Any:
    """The ``numba`` module.

    Raises:
        ImportError: numba is not installed (the message names the extra to install).
    """
    try:
        import numba
    except ImportError as exc:
        raise ImportError(
            f"{_OP} needs Numba: pip install 'feedline[numba]' (or pip install numba)"
        ) from exc
    return numba


#: Compiled dispatchers by (Python function, nogil), so a pipeline built again with the same
#: function reuses Numba's compiled code instead of compiling it once more.
_COMPILED: weakref.WeakKeyDictionary[Callable[..., Any], dict[bool, Any]] = (
    weakref.WeakKeyDictionary()
)
_COMPILED_LOCK = threading.Lock()


def _compiled(numba: Any, function: Callable[..., Any], nogil: bool) -> Any:
    with _COMPILED_LOCK:
        per_function = _COMPILED.setdefault(function, {})
        if nogil not in per_function:
            per_function[nogil] = numba.njit(nogil=nogil)(function)
        return per_function[nogil]


def _typed_list(numba: Any, arrays: Sequence[np.ndarray]) -> Any:
    typed = numba.typed.List()
    for array in arrays:
        typed.append(array)
    return typed


class NumbaFunctionKernel(Kernel):
    """``experimental.numba_function`` on the CPU."""

    def setup(self) -> None:
        """Check the arguments the CPU cannot use and compile the functions.

        Raises:
            ValueError: no ``setup_fn`` while the outputs do not mirror the inputs.
            ImportError: numba is missing.
        """
        args = self.args
        self.in_dtypes = [to_numpy_dtype(t) for t in as_list(args["in_types"])]
        self.out_dtypes = [to_numpy_dtype(t) for t in as_list(args["out_types"])]
        self.ins_ndim = [int(n) for n in as_list(args["ins_ndim"])]
        self.outs_ndim = [int(n) for n in as_list(args["outs_ndim"])]
        if args["setup_fn"] is None and self.outs_ndim != self.ins_ndim[: len(self.outs_ndim)]:
            raise ValueError(
                f"{_OP}: without setup_fn every output takes the shape of the input at its "
                f"position, so outs_ndim {self.outs_ndim} must repeat ins_ndim {self.ins_ndim}"
            )
        numba = import_numba()
        self._numba = numba
        self._run = _compiled(numba, args["run_fn"], nogil=True)
        setup_fn = args["setup_fn"]
        self._setup = _compiled(numba, setup_fn, nogil=False) if setup_fn is not None else None

    def output_layouts(self, input_layouts: tuple[str, ...]) -> tuple[str, ...]:
        """No layout on any output (as in DALI)."""
        return ("",) * len(self.out_dtypes)

    def run(self, batch: Batch) -> list[TensorListCPU]:
        """Size the outputs, then run ``run_fn`` per sample or per batch.

        Outputs start zeroed: what ``run_fn`` leaves unwritten (undefined in DALI) is the same
        on every run, whatever the batch size.
        """
        if len(batch.inputs) != len(self.in_dtypes):
            raise ValueError(
                f"{_OP}: {len(batch.inputs)} inputs for {len(self.in_dtypes)} in_types"
            )
        inputs = [self._checked_input(i, tl) for i, tl in enumerate(batch.inputs)]
        shapes = self._output_shapes(inputs, batch.size)
        outputs = [
            [np.zeros(tuple(shape), dtype) for shape in per_output]
            for per_output, dtype in zip(shapes, self.out_dtypes, strict=True)
        ]
        if self.args["batch_processing"]:
            numba = self._numba
            self._call(
                self._run,
                [_typed_list(numba, o) for o in outputs] + [_typed_list(numba, i) for i in inputs],
            )
        else:
            batch.map(
                lambda s: self._call(self._run, [o[s] for o in outputs] + [i[s] for i in inputs]),
                batch.size,
            )
        infos = batch.inputs[0].source_infos() if batch.inputs else None
        return [TensorListCPU.from_samples(o, "", infos) for o in outputs]

    def _checked_input(self, index: int, batch: TensorListCPU) -> list[np.ndarray]:
        dtype, ndim = self.in_dtypes[index], self.ins_ndim[index]
        samples = [np.ascontiguousarray(s).view() for s in batch.samples()]
        for s, sample in enumerate(samples):
            if sample.dtype != dtype or sample.ndim != ndim:
                raise TypeError(
                    f"{_OP}: input {index}, sample {s} is {sample.dtype} with {sample.ndim} "
                    f"dimensions; in_types/ins_ndim declare {dtype} with {ndim}"
                )
            sample.flags.writeable = False  # one Numba specialisation; run_fn reads inputs
        return samples

    def _output_shapes(self, inputs: list[list[np.ndarray]], size: int) -> list[np.ndarray]:
        in_shapes = [
            np.array([s.shape for s in per_input], np.int64).reshape(size, -1)
            for per_input in inputs
        ]
        out_shapes = []
        for o, ndim in enumerate(self.outs_ndim):
            like = in_shapes[o] if o < len(in_shapes) else None
            fits = like is not None and like.shape[1] == ndim
            out_shapes.append(like.copy() if fits else np.zeros((size, ndim), np.int64))
        if self._setup is not None:
            numba = self._numba
            self._call(self._setup, [_typed_list(numba, out_shapes), _typed_list(numba, in_shapes)])
        for o, shapes in enumerate(out_shapes):
            if (shapes < 0).any():
                raise ValueError(f"{_OP}: setup_fn gave output {o} a negative extent: {shapes}")
        return out_shapes

    def _call(self, function: Callable[..., Any], arrays: list[Any]) -> None:
        try:
            function(*arrays)
        except self._numba.core.errors.TypingError as exc:
            raise TypeError(f"{_OP}: Numba cannot compile the function: {exc}") from None
