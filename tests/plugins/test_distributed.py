"""Multi-process training: 4 ranks under ``torch.distributed`` (gloo, ``torchrun``-style
environment on this machine), each reading shard ``rank`` of the same ``readers.file`` pipeline.

For every shuffling mode and last-batch policy (reader padding on, as for distributed training),
with and without a checkpoint/resume in the middle of an epoch, the ranks together see every
sample exactly once per epoch (PARTIAL), every sample with only their own shard's padding copies
added (FILL), or disjoint full batches (DROP).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch.distributed", reason="the multi-rank test needs PyTorch")

WORLD = 4
SAMPLES = 37  # not a multiple of the world size nor of the batch size
BATCH_SIZE = 4
WORKER = Path(__file__).with_name("distributed_worker.py")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def gathered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Launch the ranks once; every test reads what rank 0 gathered."""
    root = tmp_path_factory.mktemp("distributed")
    data = root / "data"
    data.mkdir()
    for i in range(SAMPLES):
        (data / f"{i:03d}.bin").write_bytes(bytes([i]))
    out = root / "gathered.json"
    port = str(_free_port())
    procs = []
    for rank in range(WORLD):
        env = dict(
            os.environ,
            RANK=str(rank),
            LOCAL_RANK=str(rank),
            WORLD_SIZE=str(WORLD),
            LOCAL_WORLD_SIZE=str(WORLD),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=port,
        )
        procs.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), str(data), str(out)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    logs = []
    try:
        for proc in procs:
            logs.append(proc.communicate(timeout=240)[0])
    finally:
        for proc in procs:
            proc.kill()
    failed = {
        rank: log[-2000:]
        for rank, (proc, log) in enumerate(zip(procs, logs, strict=True))
        if proc.returncode
    }
    assert not failed, f"ranks failed: {failed}"
    result = json.loads(out.read_text())
    assert result["world"] == WORLD
    return result


def _per_rank(gathered: dict[str, Any], key: str) -> list[list[list[int]]]:
    """``[rank][epoch] -> labels`` for one configuration."""
    return [rank_results[key] for rank_results in gathered["ranks"]]


CONFIGS = [
    f"{shuffle}/{policy}"
    for shuffle in ("none", "random_shuffle", "shuffle_after_epoch")
    for policy in ("PARTIAL", "FILL", "DROP")
]


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_each_epoch_covers_the_data_set_across_ranks(gathered: dict[str, Any], config: str) -> None:
    per_rank = _per_rank(gathered, f"{config}/straight")
    policy = config.split("/")[1]
    shard_cap = -(-SAMPLES // WORLD)  # every padded shard holds ceil(N / S) samples
    for epoch in range(len(per_rank[0])):
        seen = [rank_epochs[epoch] for rank_epochs in per_rank]
        sets = [set(labels) for labels in seen]
        assert sum(len(s) for s in sets) == len(set().union(*sets)), "ranks overlap"
        if policy == "PARTIAL":
            assert sorted(label for labels in seen for label in labels) == list(range(SAMPLES))
        elif policy == "FILL":
            assert set().union(*sets) == set(range(SAMPLES))
            # Each rank pads its own shard with copies of its own samples, to whole batches.
            assert all(len(labels) == -(-shard_cap // BATCH_SIZE) * BATCH_SIZE for labels in seen)
        else:
            assert all(len(labels) == len(set(labels)) for labels in seen), "a padding copy"
            kept = (SAMPLES // WORLD) // BATCH_SIZE * BATCH_SIZE
            assert all(len(labels) == kept for labels in seen)


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_resume_mid_epoch_gives_the_same_samples(gathered: dict[str, Any], config: str) -> None:
    straight = _per_rank(gathered, f"{config}/straight")
    resumed = _per_rank(gathered, f"{config}/resumed")
    assert resumed == straight


@pytest.mark.slow
def test_shuffling_changes_the_order(gathered: dict[str, Any]) -> None:
    plain = _per_rank(gathered, "none/PARTIAL/straight")
    for shuffle in ("random_shuffle", "shuffle_after_epoch"):
        shuffled = _per_rank(gathered, f"{shuffle}/PARTIAL/straight")
        assert shuffled != plain
    epochs = _per_rank(gathered, "shuffle_after_epoch/PARTIAL/straight")[0]
    assert Counter(map(tuple, epochs)).most_common(1)[0][1] == 1, "the same order every epoch"
