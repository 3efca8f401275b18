"""Multi-process sharding: 4 processes, one shard each, read every sample once per epoch."""

from __future__ import annotations

import importlib.util
import json
import math
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
N, SHARDS, EPOCHS = 10, 4, 3
NAMES = [f"{i:02d}" for i in range(N)]


def read_shard(root: str, shard_id: int, num_shards: int, cases: list[tuple[int, dict]]
               ) -> list[list[str]]:  # fmt: skip
    """Run in a worker process: per case ``(bs, options)``, what shard ``shard_id`` reads."""
    import feedline.readers.file as file_plugin
    from feedline import fn, pipeline_def
    from feedline.core.plugins import PluginSystem, use_plugin_system

    system = PluginSystem(autoload=False)
    system.register(file_plugin, "file-reader")
    streams = []
    with use_plugin_system(system):
        for bs, options in cases:

            @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=1234)
            def pipe(options: dict) -> Any:
                data, _ = fn.readers.file(file_root=root, num_shards=num_shards,
                                          shard_id=shard_id, name="Reader", **options)  # fmt: skip
                return data

            p = pipe(options)
            p.build()
            out: list[str] = []
            while len(out) < samples_needed(bs, options):
                (data,) = p.run()
                out += [np.asarray(data[i]).tobytes().decode() for i in range(len(data))]
            p.close()
            streams.append(out[: samples_needed(bs, options)])
    return streams


@pytest.fixture
def root(tmp_path: Path) -> str:
    (tmp_path / "cls").mkdir()
    for name in NAMES:
        (tmp_path / "cls" / f"{name}.jpg").write_bytes(name.encode())
    return str(tmp_path)


def shard_size(k: int) -> int:
    return (k + 1) * N // SHARDS - k * N // SHARDS


def check_padded(streams: list[list[str]], bs: int) -> None:
    """Per epoch every shard emits the same number of samples; unique names partition the set."""
    per_epoch = math.ceil(math.ceil(N / SHARDS) / bs) * bs
    for e in range(EPOCHS):
        seen: list[str] = []
        for stream in streams:
            seen += sorted(set(stream[e * per_epoch : (e + 1) * per_epoch]))
        assert sorted(seen) == NAMES


def check_unpadded(streams: list[list[str]]) -> None:
    """Epoch e of shard k is virtual shard (k + e) mod S; epochs partition the set."""
    cuts = [[0] for _ in range(SHARDS)]
    for k in range(SHARDS):
        for e in range(EPOCHS):
            cuts[k].append(cuts[k][-1] + shard_size((k + e) % SHARDS))
    for e in range(EPOCHS):
        seen = [n for k in range(SHARDS) for n in streams[k][cuts[k][e] : cuts[k][e + 1]]]
        assert sorted(seen) == NAMES


CASES = [
    (3, {"pad_last_batch": True}),
    (2, {"pad_last_batch": True, "random_shuffle": True, "initial_fill": 5}),
    (1, {"random_shuffle": True, "initial_fill": 3}),
    (1, {}),
]


def samples_needed(bs: int, options: dict[str, Any]) -> int:
    if options.get("pad_last_batch"):
        return EPOCHS * math.ceil(math.ceil(N / SHARDS) / bs) * bs
    return EPOCHS * math.ceil(N / SHARDS)


def check(streams: list[list[list[str]]]) -> None:
    """``streams[k][c]``: what shard k read in case c."""
    for c, (bs, options) in enumerate(CASES):
        per_shard = [streams[k][c] for k in range(SHARDS)]
        if options.get("pad_last_batch"):
            check_padded(per_shard, bs)
        else:
            check_unpadded(per_shard)


def test_four_processes_multiprocessing(root: str) -> None:
    with multiprocessing.get_context("spawn").Pool(SHARDS) as pool:
        streams = pool.starmap(read_shard, [(root, k, SHARDS, CASES) for k in range(SHARDS)])
    check(streams)


TORCHRUN_SCRIPT = """
import json, sys
import torch.distributed as dist
from tests.readers.test_file_sharding import CASES, read_shard

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
mine = read_shard(sys.argv[1], rank, world, CASES)
gathered = [None] * world
dist.all_gather_object(gathered, mine)
if rank == 0:
    with open(sys.argv[2], "w") as f:
        json.dump(gathered, f)
dist.destroy_process_group()
"""


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_four_processes_torch_distributed_gloo(root: str, tmp_path: Path) -> None:
    script = tmp_path / "shard_worker.py"
    script.write_text(TORCHRUN_SCRIPT)
    out = tmp_path / "streams.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), *sys.path]))
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc_per_node={SHARDS}", str(script), root, str(out)]  # fmt: skip
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    streams = json.loads(out.read_text())
    assert len(streams) == SHARDS
    check(streams)
