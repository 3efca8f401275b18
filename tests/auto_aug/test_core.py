"""The ``@augmentation`` decorator, magnitude bins and signs, ``select`` and ``Policy``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feedline import fn, types
from feedline.auto_aug import augmentations as a
from feedline.auto_aug.core import Policy, _Augmentation, augmentation, select, signed_bin
from feedline.auto_aug.core._args import MissingArgException, UnusedArgException

from .conftest import photo_like, run_on


@augmentation(mag_range=(0, 10))
def fill_with_param(data, param):
    return fn.cast(data * 0 + param, dtype=types.FLOAT)


@augmentation(mag_range=(0, 10), randomly_negate=True, mag_to_param=lambda m: m + 100)
def fill_signed(data, param):
    return fn.cast(data * 0 + param, dtype=types.FLOAT)


def first_value(outputs):
    return [float(out.ravel()[0]) for out in outputs]


@settings(max_examples=8, deadline=None)
@given(num_bins=st.integers(2, 12), data=st.data())
def test_bin_selects_the_linspace_magnitude(num_bins, data):
    magnitude_bin = data.draw(st.integers(0, num_bins - 1))
    outs = run_on(
        [photo_like(0)],
        lambda d: fill_with_param(d, magnitude_bin=magnitude_bin, num_magnitude_bins=num_bins),
    )
    expected = np.linspace(0, 10, num_bins, dtype=np.float32)[magnitude_bin]
    assert first_value(outs) == [pytest.approx(expected)]


def test_per_sample_bins_and_signs(images):
    bins, signs = [0, 3, 7, 10], [1, 0, 1, 0]

    def graph(data, extra):
        signed = signed_bin(extra, _signs(signs))
        return fill_signed(data, magnitude_bin=signed, num_magnitude_bins=11)

    outs = run_on(images, graph, extra=[np.int32(b) for b in bins])
    expected = [100 + (-1) ** s * np.float32(b) for b, s in zip(bins, signs, strict=True)]
    assert first_value(outs) == pytest.approx(expected)


def _signs(values):
    return fn.external_source(
        source=lambda: [np.int32(v) for v in values], batch=True, dtype=types.INT32
    )


def test_unsigned_bin_for_negating_augmentation_warns(images):
    with pytest.warns(Warning, match="random_negate=True"):
        run_on(images[:1], lambda d: fill_signed(d, magnitude_bin=2, num_magnitude_bins=11))


def test_explicit_magnitudes_and_their_count(images):
    aug = fill_with_param.augmentation(mag_range=np.array([5.0, 42.0]))
    outs = run_on(images[:1], lambda d: aug(d, magnitude_bin=1))
    assert first_value(outs) == [42]
    with pytest.raises(Exception, match="has nd.array of length 2"):
        run_on(images[:1], lambda d: aug(d, magnitude_bin=1, num_magnitude_bins=3))


@pytest.mark.filterwarnings("ignore:The augmentation `translate_x`")
def test_call_errors(images):
    with pytest.raises(Exception, match="`num_magnitude_bins` argument is missing"):
        run_on(images[:1], lambda d: fill_with_param(d, magnitude_bin=1))
    with pytest.raises(Exception, match="requires `magnitude_bin`"):
        run_on(images[:1], lambda d: fill_with_param(d, num_magnitude_bins=3))
    with pytest.raises(MissingArgException, match="shape"):
        run_on(images[:1], lambda d: a.translate_x(d, magnitude_bin=1, num_magnitude_bins=3))
    bad_range = fill_with_param.augmentation(mag_range=(1, 2, 3))
    with pytest.raises(Exception, match="must be a tuple of \\(low, high\\)"):
        run_on(images[:1], lambda d: bad_range(d, magnitude_bin=1, num_magnitude_bins=3))


def test_magnitude_to_parameter_helpers_keep_dalis_names():
    """DALI's own tests precompute expected parameters through these private helpers."""
    shift = a.solarize_add.augmentation(mag_range=(0, 100))
    magnitudes = shift._get_magnitudes(5)
    table = shift._map_mags_to_params(magnitudes)
    assert table.dtype == np.uint8
    assert table.tolist() == [0, 25, 50, 75, 100]
    assert shift._map_mag_to_param(magnitudes[3]) == table[3]
    assert shift._map_mags_to_params([]).size == 0


def test_mag_to_param_must_be_consistent_and_not_a_data_node(images):
    ragged = fill_with_param.augmentation(mag_to_param=lambda m: np.zeros(int(m) + 1))
    with pytest.raises(Exception, match="the arrays of the same type and shape"):
        run_on(
            images[:1],
            lambda d: ragged(
                d,
                magnitude_bin=fn.random.uniform(values=[0], dtype=types.INT32),
                num_magnitude_bins=3,
            ),
        )
    pipelined = fill_with_param.augmentation(mag_to_param=lambda m: fn.random.uniform(range=[0, m]))
    with pytest.raises(Exception, match="returned `DataNode`"):
        run_on(images[:1], lambda d: pipelined(d, magnitude_bin=1, num_magnitude_bins=3))


def test_decorator_errors_and_settings():
    with pytest.raises(Exception, match="must accept at least two"):
        augmentation(lambda data: data)
    with pytest.raises(Exception, match="not callable"):
        augmentation(42)
    with pytest.raises(Exception, match="already decorated"):
        augmentation(a.invert)
    assert isinstance(a.invert, _Augmentation)
    renamed = a.rotate.augmentation(name="spin", mag_range=(0, 5))
    assert (renamed.name, renamed.mag_range, renamed.randomly_negate) == ("spin", (0, 5), True)
    assert renamed.op is a.rotate.op
    assert a.translate_x_no_shape.name == "translate_x"
    assert "mag_range=(0, 30)" in repr(a.rotate)


def test_select_applies_the_indexed_augmentation_per_sample(images):
    choices = [1, 0, 2, 1]
    ops = [a.identity, a.invert, a.solarize.augmentation(mag_range=np.array([128.0]))]

    def graph(data, extra):
        return select(ops, extra, data, magnitude_bin=0)

    outs = run_on(images, graph, extra=[np.int32(c) for c in choices])
    for out, image, choice in zip(outs, images, choices, strict=True):
        expected = [image, 255 - image, np.where(image < 128, image, 255 - image)][choice]
        np.testing.assert_array_equal(out, expected)


def test_policy_validation_messages():
    with pytest.raises(Exception, match="`num_magnitude_bins` must be a positive integer"):
        Policy("p", 0, [])
    with pytest.raises(Exception, match="must be a list or tuple of sub policies"):
        Policy("p", 3, "x")
    with pytest.raises(Exception, match="Each sub policy must be a list or tuple"):
        Policy("p", 3, [a.invert])
    with pytest.raises(Exception, match="specified as a triple"):
        Policy("p", 3, [[(a.invert, 0.5)]])
    with pytest.raises(Exception, match="Did you forget to use `@augmentation`"):
        Policy("p", 3, [[(lambda d, p: d, 0.5, None)]])
    with pytest.raises(Exception, match="from `\\[0, 1\\]` range. Got `1.5`"):
        Policy("p", 3, [[(a.invert, 1.5, None)]])
    with pytest.raises(Exception, match="magnitude bin is required"):
        Policy("p", 3, [[(a.rotate, 0.5, None)]])
    with pytest.raises(Exception, match="from `\\[0, 2\\]` range. Got `3`"):
        Policy("p", 3, [[(a.rotate, 0.5, 3)]])
    with pytest.warns(Warning, match="probability 0"):
        Policy("p", 3, [[(a.invert, 0, None)]])
    with pytest.warns(Warning, match="will be ignored"):
        Policy("p", 3, [[(a.invert, 0.5, 1)]])


def test_policy_names_distinct_augmentations_apart():
    wide = a.rotate.augmentation(mag_range=(0, 90))
    policy = Policy("p", 3, [[(a.rotate, 0.5, 1), (wide, 0.5, 2)], [(a.invert, 1, None)]])
    assert list(policy.augmentations) == ["0__rotate", "1__rotate", "2__invert"]
    assert "Policy(name='p', num_magnitude_bins=3" in repr(policy)


def test_unused_kwargs_are_rejected(images):
    from feedline.auto_aug.rand_augment import apply_rand_augment

    with pytest.raises(UnusedArgException, match="`colour` is not used"):
        run_on(images[:1], lambda d: apply_rand_augment([a.invert], d, 1, 0, colour=3))
