"""Pipeline checkpoints: what a pipeline made with ``checkpoint=`` remembers of it."""

from __future__ import annotations

import json

from feedline import fn, pipeline_def


@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
def noise():
    return fn.random.uniform(range=(0, 1))


def test_restored_checkpoint_is_the_checkpoint_given() -> None:
    fresh = noise(enable_checkpointing=True)
    fresh.build()
    fresh.run()
    saved = json.loads(fresh.checkpoint())
    saved["iterator_data"] = {"counter": 2}  # what a framework iterator adds
    restored = noise(checkpoint=json.dumps(saved))
    restored.build()
    assert fresh.restored_checkpoint is None
    assert restored.restored_checkpoint == saved
    assert restored.restored_checkpoint["iterator_data"] == {"counter": 2}
