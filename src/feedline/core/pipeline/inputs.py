"""Input callbacks run when an iteration is scheduled, on the scheduling thread (as in DALI).

For every iteration that ``run()``/``schedule_run()`` schedules, :class:`ScheduledInputs` calls
each callback source's :meth:`~feedline.core.kernel.Kernel.fetch_input` (in graph order), then
the pipeline's ``iter_setup()`` hook, and only when all of them succeeded hands each source its
batch for that iteration. The rest of the iteration (readers, operators) is computed later,
on the background thread when the executor is asynchronous.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from feedline.core.errors import OperatorError, callback_error
from feedline.core.kernel import Kernel

__all__ = ["ScheduledInputs"]


class ScheduledInputs:
    """The callback sources of a built pipeline and its ``iter_setup`` hook.

    Args:
        sources: ``(operator name, kernel)`` of every kernel that fetches its input, in graph
            order.
        iter_setup: called once per scheduled iteration after the callbacks.
    """

    def __init__(self, sources: Sequence[tuple[str, Kernel]], iter_setup: Callable[[], Any]):
        self._sources = list(sources)
        self._iter_setup = iter_setup

    def prepare(self, iteration: int) -> bool:
        """Run the callbacks of iteration ``iteration``, then ``iter_setup()``.

        As in DALI, every source is called even after one of them raised StopIteration; the
        batches of such an iteration are dropped and ``iter_setup()`` is not called.

        Returns:
            False when a source or ``iter_setup()`` raised StopIteration (the input ended).

        Raises:
            OperatorError: a callback failed (naming its operator and the iteration); also an
                instance of the callback's exception type, as DALI lets it through.
        """
        fetched: list[tuple[Kernel, Any]] = []
        ended = False
        for name, kernel in self._sources:
            try:
                fetched.append((kernel, kernel.fetch_input()))
            except StopIteration:
                ended = True
            except OperatorError:
                raise
            except Exception as exc:
                raise callback_error(exc, operator=name, iteration=iteration) from exc
        if ended:
            return False
        try:
            self._iter_setup()
        except StopIteration:
            return False
        for kernel, data in fetched:
            kernel.accept_input(iteration, data)
        return True

    def drop(self) -> None:
        """Forget the batches of scheduled iterations that will not run."""
        for _, kernel in self._sources:
            kernel.drop_inputs()
