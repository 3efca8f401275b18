"""Pure sample-order logic shared by every reader (``docs/readers.md``).

The :class:`Sampler` decides *which* sample a reader emits next; it never touches data. It
implements shard boundaries, cyclic streaming and ``stick_to_shard``, ``pad_last_batch``, the
fixed-seed list permutation and the ``initial_fill`` shuffle buffer that never mixes epochs,
``shuffle_after_epoch`` and a JSON-able checkpoint state.

Model: a *source* reads the samples of epoch 0, epoch 1, ... sequentially (epoch ``e`` of shard
``k`` is the range of shard ``(k + e) % S``, or of shard ``k`` itself with ``stick_to_shard``).
A buffer holds ``initial_fill`` samples read ahead; each output picks, uniformly at random, one
buffered sample of the current epoch and refills the buffer from the source. When the current
epoch has no sample left, ``pad_last_batch`` repeats the last emitted sample until the epoch holds
``ceil(N / S)`` samples and the batch is full; then the next epoch starts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

LIST_SHUFFLE_SEED = 524287
"""Fixed seed of the one-off ``random_shuffle`` list permutation and of ``shuffle_after_epoch``."""

STATE_VERSION = 1


class TooFewSamplesError(ValueError, RuntimeError):
    """A reader has fewer samples than shards. A ``ValueError``, and a ``RuntimeError`` as
    DALI raises when the pipeline is built (with the same words)."""


def shard_start(num_samples: int, num_shards: int, shard_id: int) -> int:
    """First sample index of shard ``shard_id``: ``floor(shard_id * N / S)``."""
    return num_samples * shard_id // num_shards


def shard_bounds(num_samples: int, num_shards: int, shard_id: int) -> tuple[int, int]:
    """Half-open range ``[start, end)`` of shard ``shard_id`` among ``num_shards``."""
    return (
        shard_start(num_samples, num_shards, shard_id),
        shard_start(num_samples, num_shards, shard_id + 1),
    )


def padded_shard_size(num_samples: int, num_shards: int) -> int:
    """Samples per shard and epoch once padded: ``ceil(N / S)``."""
    return -(-num_samples // num_shards)


def epoch_size_padded(num_samples: int, num_shards: int, pad_last_batch: bool) -> int:
    """``ceil(N / S) * S`` with padding, else ``N`` (no rounding to the batch size)."""
    if pad_last_batch:
        return padded_shard_size(num_samples, num_shards) * num_shards
    return num_samples


def list_permutation(num_samples: int, seed: int = LIST_SHUFFLE_SEED) -> np.ndarray:
    """The deterministic permutation of ``range(num_samples)`` drawn from ``seed``."""
    return np.random.RandomState(seed).permutation(num_samples)


def check_order_settings(
    *,
    batch_size: int,
    num_shards: int,
    shard_id: int,
    initial_fill: int,
    random_shuffle: bool,
    shuffle_after_epoch: bool,
    stick_to_shard: bool,
) -> None:
    """Reject order settings that are invalid whatever the data set (``docs/readers.md``).

    Raises:
        ValueError: naming the offending argument(s).
    """
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, got {num_shards}")
    if shard_id < 0:
        raise ValueError(f"shard_id must not be negative, got {shard_id}")
    if shard_id >= num_shards:
        raise ValueError(
            f"num_shards needs to be greater than shard_id: shard_id={shard_id}, "
            f"num_shards={num_shards}"
        )
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if initial_fill < 1:
        raise ValueError(f"initial_fill must be at least 1, got {initial_fill}")
    if shuffle_after_epoch and random_shuffle:
        raise ValueError("shuffle_after_epoch and random_shuffle cannot both be True")
    if shuffle_after_epoch and stick_to_shard:
        raise ValueError("shuffle_after_epoch and stick_to_shard cannot both be True")


@dataclass(frozen=True)
class SamplerConfig:
    """Everything that determines a reader's sample order.

    Attributes:
        num_samples: N, samples in the data set (after the reader's own filtering).
        batch_size: samples per emitted batch (the pipeline's ``max_batch_size``).
        num_shards: S.
        shard_id: k, this reader's shard.
        random_shuffle: permute the list once with :data:`LIST_SHUFFLE_SEED` and shuffle
            through a buffer of ``initial_fill`` samples.
        initial_fill: shuffle-buffer size (treated as 1 without ``random_shuffle``).
        shuffle_after_epoch: re-permute the whole list every epoch (implies stick-to-shard).
        shuffle_after_epoch_seed: base seed of those permutations.
        stick_to_shard: stay on shard k instead of rotating through the data set.
        pad_last_batch: pad every epoch of a shard to ``ceil(N / S)`` samples and a full batch.
        seed: seed of the shuffle buffer's random generator.
    """

    num_samples: int
    batch_size: int
    num_shards: int = 1
    shard_id: int = 0
    random_shuffle: bool = False
    initial_fill: int = 1024
    shuffle_after_epoch: bool = False
    shuffle_after_epoch_seed: int = LIST_SHUFFLE_SEED
    stick_to_shard: bool = False
    pad_last_batch: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        check_order_settings(
            batch_size=self.batch_size,
            num_shards=self.num_shards,
            shard_id=self.shard_id,
            initial_fill=self.initial_fill,
            random_shuffle=self.random_shuffle,
            shuffle_after_epoch=self.shuffle_after_epoch,
            stick_to_shard=self.stick_to_shard,
        )
        if self.num_samples < self.num_shards:
            raise TooFewSamplesError(
                f"The number of input samples: {self.num_samples}, needs to be at least equal "
                f"to the requested number of shards: {self.num_shards}."
            )

    @property
    def buffer_size(self) -> int:
        """Effective shuffle-buffer size."""
        return self.initial_fill if self.random_shuffle else 1

    @property
    def sticky(self) -> bool:
        """Whether every epoch reads shard ``shard_id`` (explicit or forced by shuffling)."""
        return self.stick_to_shard or self.shuffle_after_epoch


@dataclass
class BatchPlan:
    """The samples of one batch: canonical indices, their epochs, and which ones are padding."""

    indices: list[int]
    epochs: list[int]
    padded: list[bool]


class Sampler:
    """Endless stream of sample indices for one shard, one batch at a time.

    Args:
        config: the reader's order-determining settings.
    """

    def __init__(self, config: SamplerConfig) -> None:
        self.config = config
        n, s = config.num_samples, config.num_shards
        self._starts = [shard_start(n, s, j) for j in range(s + 1)]
        self._padded_size = padded_shard_size(n, s)
        self._base_order = list_permutation(n) if config.random_shuffle else None
        self._rng = np.random.Generator(np.random.PCG64(config.seed))
        self._config_dict = asdict(config)
        self._reset()

    def _reset(self) -> None:
        self.epoch = 0
        self._returned_in_epoch = 0
        self._emitted = 0
        self._last = -1
        self._read_epoch = 0
        self._read_offset = 0
        self._current: list[int] = []
        self._filled = False
        self._segments: dict[int, Sequence[int]] = {}
        self._order_epoch = -1
        self._order: np.ndarray | None = None

    # -- source: sequential reading of epoch after epoch ------------------------------------
    # The buffer holds ``current`` (the unreturned samples of the current epoch) plus every
    # sample read from later epochs: those are never returned before their epoch starts, so they
    # are exactly the source between the start of epoch ``epoch + 1`` and the read position.
    def _order_for(self, epoch: int) -> np.ndarray | None:
        """The sample list of ``epoch`` (``None`` = identity)."""
        cfg = self.config
        if not cfg.shuffle_after_epoch:
            return self._base_order
        if self._order_epoch > epoch or self._order is None:
            self._order_epoch, self._order = -1, np.arange(cfg.num_samples)
        while self._order_epoch < epoch:
            self._order_epoch += 1
            step_seed = cfg.shuffle_after_epoch_seed + self._order_epoch + 1
            self._order = self._order[list_permutation(cfg.num_samples, step_seed)]
        return self._order

    def _segment(self, epoch: int) -> Sequence[int]:
        """Canonical indices of the samples of ``epoch`` of this shard, in reading order."""
        cfg = self.config
        virtual = cfg.shard_id if cfg.sticky else (cfg.shard_id + epoch) % cfg.num_shards
        start, end = self._starts[virtual], self._starts[virtual + 1]
        order = self._order_for(epoch)
        return range(start, end) if order is None else order[start:end].tolist()

    def _segment_for(self, epoch: int) -> Sequence[int]:
        """:meth:`_segment`, cached while the buffer holds samples of ``epoch``."""
        segment = self._segments.get(epoch)
        if segment is None:
            segment = self._segments[epoch] = self._segment(epoch)
        return segment

    def _read(self) -> None:
        """Read the next sample of the source into the buffer."""
        epoch = self._read_epoch
        segment = self._segment_for(epoch)
        if epoch == self.epoch:
            self._current.append(segment[self._read_offset])
        self._read_offset += 1
        if self._read_offset == len(segment):
            self._read_epoch += 1
            self._read_offset = 0

    def _fill(self) -> None:
        for _ in range(self.config.buffer_size):
            self._read()
        self._filled = True

    def _next_epoch(self) -> None:
        """Start the next epoch: its samples already read become eligible."""
        self._segments.pop(self.epoch, None)
        self.epoch += 1
        self._returned_in_epoch = 0
        segment = self._segment_for(self.epoch)
        read = len(segment) if self._read_epoch > self.epoch else self._read_offset
        self._current.extend(segment[:read])

    # -- output ------------------------------------------------------------------------------
    def next_batch(self) -> BatchPlan:
        """Plan the next batch of ``batch_size`` samples."""
        if not self._filled:
            self._fill()
        if self.config.buffer_size == 1:
            return self._next_in_order()
        return self._next_slot_by_slot()

    def _next_slot_by_slot(self) -> BatchPlan:
        """The general algorithm, one output at a time (any buffer size)."""
        cfg = self.config
        draws = self._rng.random(cfg.batch_size).tolist() if cfg.buffer_size > 1 else None
        plan = BatchPlan([], [], [])
        current = self._current  # mutated in place only
        for slot in range(cfg.batch_size):
            while not current and not self._needs_padding():
                self._next_epoch()
            padded = not current
            if not padded:
                j = -1 if draws is None else min(int(draws[slot] * len(current)), len(current) - 1)
                self._last = current[j]
                current[j] = current[-1]
                current.pop()
                self._read()
            plan.indices.append(self._last)
            plan.epochs.append(self.epoch)
            plan.padded.append(padded)
            self._returned_in_epoch += 1
            self._emitted += 1
        return plan

    def _next_in_order(self) -> BatchPlan:
        """:meth:`_next_slot_by_slot` for a buffer of one sample, a run at a time.

        The buffer then holds the one sample read ahead, so the output is the source itself:
        the buffered sample, then the rest of its epoch as read (one slice), then padding.
        """
        batch_size = self.config.batch_size
        plan = BatchPlan([], [], [])
        current = self._current  # [] or [the buffered sample, of the current epoch]
        while (room := batch_size - len(plan.indices)) > 0:
            if current:
                segment = self._segment_for(self.epoch)
                offset = self._read_offset
                rest = segment[offset : offset + room] if self._read_epoch == self.epoch else ()
                run = [current[0], *rest]
                count = min(room, len(run))
                padded = False
                del current[:]
                if count < len(run):
                    current.append(run[count])
                del run[count:]
                self._advance(count)
                self._last = run[-1]
            elif self._needs_padding():
                count = min(room, self._padding_left())
                run, padded = [self._last] * count, True
            else:
                self._next_epoch()
                continue
            plan.indices += run
            plan.epochs += [self.epoch] * count
            plan.padded += [padded] * count
            self._returned_in_epoch += count
            self._emitted += count
        return plan

    def _advance(self, count: int) -> None:
        """Move the read position ``count`` samples on (what ``count`` :meth:`_read` calls do
        to it, without touching the buffer)."""
        while count:
            segment = self._segment_for(self._read_epoch)
            step = min(count, len(segment) - self._read_offset)
            self._read_offset += step
            count -= step
            if self._read_offset == len(segment):
                self._read_epoch += 1
                self._read_offset = 0

    def _padding_left(self) -> int:
        """Padding samples that end the current, exhausted epoch (while it needs padding)."""
        missing = max(self._padded_size - self._returned_in_epoch, 0)
        return missing + (-(self._emitted + missing)) % self.config.batch_size

    def _needs_padding(self) -> bool:
        """Whether the exhausted current epoch still needs a padding sample."""
        cfg = self.config
        return cfg.pad_last_batch and (
            self._returned_in_epoch < self._padded_size or self._emitted % cfg.batch_size != 0
        )

    # -- checkpoint ----------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """JSON-able position, epoch, buffer and random state after the last planned batch."""
        return {
            "version": STATE_VERSION,
            "config": self._config_dict,
            "epoch": self.epoch,
            "returned_in_epoch": self._returned_in_epoch,
            "emitted": self._emitted,
            "last": self._last,
            "read_epoch": self._read_epoch,
            "read_offset": self._read_offset,
            "filled": self._filled,
            "current": list(self._current),
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue exactly after the batch whose :meth:`state_dict` is ``state``.

        The state must come from a sampler with the same settings except ``seed``.

        Raises:
            ValueError: the state is malformed or was saved with different order settings.
        """
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise ValueError(
                f"reader state must be a dict with version {STATE_VERSION}, got "
                f"{type(state).__name__} with version "
                f"{state.get('version') if isinstance(state, dict) else None!r}"
            )
        saved = state.get("config", {})
        for key, value in self._config_dict.items():
            # The seed may differ (an unseeded pipeline): the random state itself is restored.
            if key != "seed" and saved.get(key) != value:
                raise ValueError(
                    f"reader state was saved with {key}={saved.get(key)!r}, but this reader has "
                    f"{key}={value!r}"
                )
        try:
            self.epoch = int(state["epoch"])
            self._returned_in_epoch = int(state["returned_in_epoch"])
            self._emitted = int(state["emitted"])
            self._last = int(state["last"])
            self._read_epoch = int(state["read_epoch"])
            self._read_offset = int(state["read_offset"])
            self._filled = bool(state["filled"])
            self._current = [int(i) for i in state["current"]]
            self._rng.bit_generator.state = state["rng"]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed reader state: {exc!r}") from exc
        if isinstance(saved.get("seed"), int):
            # the stream is the saved one now: later states name its seed, not this reader's
            self.config = replace(self.config, seed=saved["seed"])
            self._config_dict = asdict(self.config)
        self._segments, self._order_epoch, self._order = {}, -1, None

    def epoch_samples(self, epoch: int) -> list[int]:
        """Canonical indices of the samples that make up ``epoch`` of this shard (no padding)."""
        return list(self._segment(epoch))


def batches_per_epoch(config: SamplerConfig) -> int:
    """Batches of one padded epoch (every shard emits the same number); needs ``pad_last_batch``."""
    if not config.pad_last_batch:
        raise ValueError("batches_per_epoch is defined only with pad_last_batch=True")
    return math.ceil(padded_shard_size(config.num_samples, config.num_shards) / config.batch_size)
