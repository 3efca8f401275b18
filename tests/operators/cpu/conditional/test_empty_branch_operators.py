"""Operators of the transforms and reductions families in a branch that no sample takes."""

from __future__ import annotations

import numpy as np

from feedline import fn, pipeline_def, types


def test_transforms_and_reductions_run_on_an_empty_branch():
    @pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=1, enable_conditionals=True)
    def pipe():
        image = fn.reshape(
            fn.random.uniform(range=[0, 255], shape=(6, 5, 3), dtype=types.UINT8), layout="HWC"
        )
        never = fn.random.uniform(values=[0], dtype=types.INT32)
        matrix = fn.transforms.translation(offset=[0.0, 0.0])
        low = fn.reductions.min(image, axis_names="HW", keep_dims=True)
        if never == 1:
            matrix = fn.transforms.shear(shear=[0.1, 0.0])
            low = fn.reductions.min(image, axis_names="HW", keep_dims=True) * 0
        return matrix, low, image

    pipeline = pipe()
    pipeline.build()
    matrices, lows, images = pipeline.run()
    for matrix, low, image in zip(matrices, lows, images, strict=True):
        np.testing.assert_array_equal(np.asarray(matrix), [[1, 0, 0], [0, 1, 0]])
        np.testing.assert_array_equal(
            np.asarray(low), np.asarray(image).min(axis=(0, 1), keepdims=True)
        )
