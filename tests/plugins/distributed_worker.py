"""One rank of the multi-process test: run as ``python distributed_worker.py DATA_DIR OUT_JSON``
under a ``torchrun``-style environment (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``).

Every rank builds the same ``readers.file`` pipeline with ``shard_id=rank,
num_shards=world_size`` for each configuration, reads a few epochs through the PyTorch iterator
(once straight through, once stopped mid-epoch and resumed from ``state_dict()`` in a new
pipeline), and sends the labels it saw to rank 0 with ``all_gather_object``; rank 0 writes them
all to ``OUT_JSON`` for the test to check.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import torch.distributed as dist

from feedline import fn, pipeline_def
from feedline.plugins.pytorch import DALIGenericIterator, LastBatchPolicy

BATCH_SIZE = 4
EPOCHS = 3
#: (epoch, batch) after which the resumed run saves its state and starts a new pipeline.
STOP_AT = (1, 0)
SHUFFLES: dict[str, dict[str, Any]] = {
    "none": {},
    "random_shuffle": {"random_shuffle": True, "initial_fill": 5},
    "shuffle_after_epoch": {"shuffle_after_epoch": True},
}
POLICIES = ("PARTIAL", "FILL", "DROP")


def make_iterator(files: list[str], rank: int, world: int, shuffle: str, policy: str) -> Any:
    """The pipeline every rank builds, wrapped in the iterator (not yet started)."""

    @pipeline_def(batch_size=BATCH_SIZE, num_threads=2, device_id=None, seed=1234)
    def graph() -> Any:
        _, label = fn.readers.file(
            files=files,
            labels=list(range(len(files))),
            shard_id=rank,
            num_shards=world,
            pad_last_batch=True,
            name="Reader",
            **SHUFFLES[shuffle],
        )
        return label

    pipe = graph(enable_checkpointing=True)
    return DALIGenericIterator(
        [pipe],
        ["label"],
        reader_name="Reader",
        last_batch_policy=LastBatchPolicy[policy],
        prepare_first_batch=False,
    )


def read_epochs(make: Any) -> list[list[int]]:
    """Labels per epoch; stops at ``STOP_AT`` and resumes in a fresh pipeline when asked."""
    iterator = make()
    epochs: list[list[int]] = []
    for epoch in range(EPOCHS):
        seen: list[int] = []
        for batch_index, batch in enumerate(iterator):
            seen.extend(int(v) for v in batch[0]["label"].reshape(-1))
            if (epoch, batch_index) == STOP_AT and make.resume:
                assert batch_index + 1 < len(iterator), "STOP_AT must fall inside an epoch"
                state = iterator.state_dict()
                iterator = make()
                iterator.load_state_dict(json.loads(json.dumps(state)))
                # The resumed iterator finishes this epoch.
                seen.extend(int(v) for resumed in iterator for v in resumed[0]["label"].reshape(-1))
                break
        epochs.append(seen)
    return epochs


class IteratorFactory:
    """Builds this rank's iterator for one configuration; ``resume`` asks for a mid-epoch stop."""

    def __init__(self, files: list[str], shuffle: str, policy: str, resume: bool) -> None:
        self.files, self.shuffle, self.policy, self.resume = files, shuffle, policy, resume
        self.rank, self.world = dist.get_rank(), dist.get_world_size()

    def __call__(self) -> Any:
        return make_iterator(self.files, self.rank, self.world, self.shuffle, self.policy)


def main(data_dir: str, out_json: str) -> None:
    """Run every configuration on this rank and gather the results on rank 0."""
    dist.init_process_group("gloo")
    files = sorted(str(path) for path in Path(data_dir).iterdir())
    results: dict[str, list[list[int]]] = {}
    for shuffle in SHUFFLES:
        for policy in POLICIES:
            for resume in (False, True):
                factory = IteratorFactory(files, shuffle, policy, resume)
                results[f"{shuffle}/{policy}/{'resumed' if resume else 'straight'}"] = read_epochs(
                    factory
                )
    gathered: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, results)
    if dist.get_rank() == 0:
        Path(out_json).write_text(json.dumps({"world": len(gathered), "ranks": gathered}))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main(sys.argv[1], sys.argv[2])
