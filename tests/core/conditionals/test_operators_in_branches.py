"""Every operator family inside a branch: the conditional pipeline gives each sample what the
same operators give it in a pipeline without conditionals (the per-sample reference picks, for
sample ``i``, the output of the branch that sample ``i`` takes). Readers and random generators
in a branch produce the whole batch and hand the branch its samples (as DALI's do), so the
results are the same for any number of threads."""

# ruff: noqa: SIM108

from __future__ import annotations

import numpy as np
import pytest

from feedline import fn, pipeline_def, types
from tests.conftest import sample_data
from tests.core.conditionals.helpers import columns_source

BATCH = 6
MASK = [True, False, False, True, True, False]
FILE_ROOT = str(sample_data("file_tree"))


def _mask():
    return fn.external_source(source=columns_source([np.bool_(m) for m in MASK]), batch=False)


def _images():
    jpegs, labels = fn.readers.file(file_root=FILE_ROOT, seed=5)
    return fn.resize(fn.decoders.image(jpegs), size=[24, 32]), labels


def _on_true(images):
    """Image, geometry and color operators on the samples of the `if` branch."""
    flipped = fn.flip(images, horizontal=1)
    return fn.color_twist(flipped, saturation=0.3, brightness=1.2)


def _on_false(images):
    """Geometry, color and math operators on the samples of the `else` branch."""
    rotated = fn.rotate(images, angle=90)
    gray = fn.hsv(rotated, saturation=0.0)
    return fn.cast(gray * 0.5, dtype=types.UINT8)


def _samples(batch):
    return [np.array(s) for s in batch]


def _run(pipe, iterations=2):
    pipe.build()
    return [[_samples(out) for out in pipe.run()] for _ in range(iterations)]


def _reference(iterations=2):
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, seed=11)
    def both():
        images, labels = _images()
        return _on_true(images), _on_false(images), labels

    runs = _run(both(), iterations)
    return [
        ([a if m else b for a, b, m in zip(on_true, on_false, MASK, strict=True)], labels)
        for on_true, on_false, labels in runs
    ]


@pipeline_def(batch_size=BATCH, device_id=None, seed=11, enable_conditionals=True)
def _conditional():
    images, labels = _images()
    if _mask():
        out = _on_true(images)
    else:
        out = _on_false(images)
    return out, labels


@pytest.mark.parametrize("num_threads", [1, 3])
def test_image_geometry_color_math_in_branches_match_the_per_sample_reference(num_threads):
    got = _run(_conditional(num_threads=num_threads))
    for (images, labels), (want_images, want_labels) in zip(got, _reference(), strict=True):
        assert [x.item() for x in labels] == [x.item() for x in want_labels]
        for i, (a, b) in enumerate(zip(images, want_images, strict=True)):
            assert a.shape == b.shape, f"sample {i}"
            np.testing.assert_array_equal(a, b, err_msg=f"sample {i}")


def test_reader_and_generator_in_a_branch_give_the_samples_they_give_outside():
    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None)
    def outside():
        _, labels = fn.readers.file(file_root=FILE_ROOT, seed=3)
        return labels, fn.random.uniform(range=[0, 1], seed=4)

    @pipeline_def(batch_size=BATCH, num_threads=2, device_id=None, enable_conditionals=True)
    def inside():
        if _mask():
            _, labels = fn.readers.file(file_root=FILE_ROOT, seed=3)
            draw = fn.random.uniform(range=[0, 1], seed=4)
        else:
            labels = types.Constant(np.int32([-1]), device="cpu")
            draw = types.Constant(np.float32(-1), device="cpu")
        return labels, draw

    for (labels, draws), (want_labels, want_draws) in zip(
        _run(inside(), 3), _run(outside(), 3), strict=True
    ):
        for i, taken in enumerate(MASK):
            assert labels[i].item() == (want_labels[i].item() if taken else -1)
            assert float(draws[i]) == (float(want_draws[i]) if taken else -1.0)


@pipeline_def(batch_size=BATCH, device_id=None, seed=21, enable_conditionals=True)
def _random_in_branches():
    data = fn.external_source(
        source=lambda info: np.full((4, 4), info.idx_in_batch, np.float32), batch=False
    )
    if _mask():
        out = fn.noise.gaussian(data, stddev=2.0)
        if fn.random.coin_flip(probability=0.5) == 1:
            out = out + fn.random.normal()
    else:
        out = data * fn.random.uniform(range=[0.5, 1.5])
    return out


def test_random_operators_in_branches_are_the_same_for_any_thread_count():
    runs = [_run(_random_in_branches(num_threads=n), 3) for n in (1, 2, 4)]
    for other in runs[1:]:
        for iteration, want in zip(other, runs[0], strict=True):
            for a, b in zip(iteration[0], want[0], strict=True):
                np.testing.assert_array_equal(a, b)
    first, second = runs[0][0][0], runs[0][1][0]
    assert any(not np.array_equal(a, b) for a, b in zip(first, second, strict=True))


def test_empty_branches_run_and_merge():
    @pipeline_def(batch_size=4, num_threads=2, device_id=None, enable_conditionals=True)
    def pipe(flag):
        pred = fn.external_source(source=lambda info: np.bool_(flag), batch=False)
        images, _ = _images()
        if pred:
            out = fn.flip(images, horizontal=1)
        else:
            out = fn.rotate(images, angle=90)
        return out

    for flag in (True, False):
        (outs,) = _run(pipe(flag=flag), 1)[0]
        assert len(outs) == 4
        assert all(o.shape == ((24, 32, 3) if flag else (32, 24, 3)) for o in outs)
