"""DALI's older spellings (``fn.experimental.resize``, ``fn.image_decoder``, and the names from
before its readers, random numbers and transforms had their own modules: ``fn.file_reader``,
``fn.coin_flip``, ``fn.transform_translation``…) are the current operators under a second name:
the same schema and kernels, registered with every plugin loaded."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, pipeline_def
from feedline.core.plugins import get_plugin_system
from feedline.data import path as data_path


@pytest.mark.parametrize(
    ("old", "current"),
    [
        ("experimental.resize", "resize"),
        ("experimental.decoders.image", "decoders.image"),
        ("experimental.decoders.image_slice", "decoders.image_slice"),
        ("image_decoder_random_crop", "decoders.image_random_crop"),
        ("coco_reader", "readers.coco"),
        ("file_reader", "readers.file"),
        ("numpy_reader", "readers.numpy"),
        ("tfrecord_reader", "readers.tfrecord"),
        ("coin_flip", "random.coin_flip"),
        ("uniform", "random.uniform"),
        ("normal_distribution", "random.normal"),
        ("transform_translation", "transforms.translation"),
    ],
)
def test_older_name_shares_the_current_schema_and_kernels(old: str, current: str) -> None:
    registry = get_plugin_system().ensure_loaded()
    old_entry, entry = registry.entry(old), registry.entry(current)
    assert old_entry is not None and entry is not None
    assert old_entry.kernels == entry.kernels
    assert old_entry.schema.args == entry.schema.args
    assert f"older spelling of ``{current}``" in old_entry.schema.doc


def test_older_reader_name_reads_as_the_reader() -> None:
    root = str(data_path("file_tree"))

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=3)
    def both():
        _, old = fn.file_reader(file_root=root, random_shuffle=True, seed=5)
        _, new = fn.readers.file(file_root=root, random_shuffle=True, seed=5)
        return old, new

    pipe = both()
    for _ in range(3):
        old, new = pipe.run()
        assert [int(np.asarray(x)[0]) for x in old] == [int(np.asarray(x)[0]) for x in new]
