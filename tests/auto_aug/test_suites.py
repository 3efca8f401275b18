"""auto_augment, rand_augment and trivial_augment_wide: arguments, errors, per-sample choice,
determinism across thread counts, and pipelines on real images."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import feedline.data
from feedline import fn, pipeline_def
from feedline.auto_aug import augmentations as a
from feedline.auto_aug import auto_augment, rand_augment, trivial_augment
from feedline.auto_aug.core import Policy, augmentation

from .conftest import photo_like, run_on


def many_images(count=16):
    return [photo_like(seed, 20, 18) for seed in range(count)]


SUITES = {
    "auto_augment": lambda d: auto_augment.auto_augment(d),
    "auto_augment_svhn": lambda d: auto_augment.auto_augment(d, "svhn", shape=(20, 18)),
    "auto_augment_cifar": lambda d: auto_augment.auto_augment(d, "reduced_cifar10"),
    "auto_augment_reduced": lambda d: auto_augment.auto_augment(d, "reduced_image_net"),
    "rand_augment": lambda d: rand_augment.rand_augment(d, n=3, m=17),
    "rand_augment_non_monotonic": lambda d: rand_augment.rand_augment(
        d, n=2, m=5, num_magnitude_bins=11, monotonic_mag=False
    ),
    "trivial_augment": lambda d: trivial_augment.trivial_augment_wide(d),
}


@pytest.mark.parametrize("name", sorted(SUITES))
def test_seeded_runs_are_the_same_for_any_thread_count(name):
    images = many_images()
    one = run_on(images, SUITES[name], num_threads=1, seed=5)
    three = run_on(images, SUITES[name], num_threads=3, seed=5)
    for x, y, image in zip(one, three, images, strict=True):
        assert x.shape == image.shape and x.dtype == np.uint8
        np.testing.assert_array_equal(x, y)
    changed = sum(not np.array_equal(x, image) for x, image in zip(one, images, strict=True))
    assert changed > 0
    other_seed = run_on(images, SUITES[name], num_threads=1, seed=6)
    assert any(not np.array_equal(x, y) for x, y in zip(one, other_seed, strict=True))


def test_rand_augment_applies_n_augmentations_chosen_per_sample():
    images = many_images(24)
    # invert twice is the identity; invert once is 255 - x: with n=2 both occur per sample.
    ops = [a.invert, a.identity]
    outs = run_on(images, lambda d: rand_augment.apply_rand_augment(ops, d, n=2, m=0), seed=3)
    kinds = set()
    for out, image in zip(outs, images, strict=True):
        if np.array_equal(out, image):
            kinds.add("even")
        else:
            np.testing.assert_array_equal(out, 255 - image)
            kinds.add("odd")
    assert kinds == {"even", "odd"}


def test_trivial_augment_picks_per_sample():
    images = many_images(24)
    ops = [a.invert, a.identity]
    outs = run_on(images, lambda d: trivial_augment.apply_trivial_augment(ops, d), seed=3)
    inverted = [not np.array_equal(o, i) for o, i in zip(outs, images, strict=True)]
    assert 0 < sum(inverted) < len(images)


def test_custom_policy_runs_steps_with_their_probabilities():
    images = many_images(24)
    always = Policy("always", 3, [[(a.invert, 1.0, None)]])
    with pytest.warns(Warning, match="probability 0"):
        never = Policy("never", 3, [[(a.invert, 0.0, None), (a.identity, 1.0, None)]])
    halves = Policy("halves", 3, [[(a.invert, 0.5, None)]])
    for out, image in zip(
        run_on(images, lambda d: auto_augment.apply_auto_augment(always, d)), images, strict=True
    ):
        np.testing.assert_array_equal(out, 255 - image)
    pass_through = run_on(images, lambda d: auto_augment.apply_auto_augment(never, d))
    for out, image in zip(pass_through, images, strict=True):
        np.testing.assert_array_equal(out, image)
    outs = run_on(images, lambda d: auto_augment.apply_auto_augment(halves, d), seed=2)
    inverted = [not np.array_equal(o, i) for o, i in zip(outs, images, strict=True)]
    assert 0 < sum(inverted) < len(images)


def test_image_net_policy_table():
    policy = auto_augment.get_image_net_policy()
    assert policy.name == "ImageNetPolicy" and policy.num_magnitude_bins == 11
    assert len(policy.sub_policies) == 25
    assert set(policy.augmentations) == {
        "auto_contrast", "color", "equalize", "invert", "posterize", "rotate", "shear_x",
        "shear_y", "solarize", "solarize_add", "translate_y",
    }  # fmt: skip
    first = policy.sub_policies[0]
    assert [(aug.name, p, mag) for aug, p, mag in first] == [
        ("equalize", 0.8, None),
        ("shear_y", 0.8, 4),
    ]
    assert policy.augmentations["translate_y"].mag_range == (0, 250)
    relative = auto_augment.get_image_net_policy(use_shape=True, max_translate_rel=(0.5, 0.25))
    assert relative.augmentations["translate_y"].mag_range == (0, 0.5)


def test_suite_contents():
    names = [aug.name for aug in rand_augment.get_rand_augment_suite()]
    assert len(names) == 14 and names[:2] == ["translate_x", "translate_y"]
    wide = trivial_augment.get_trivial_augment_wide_suite(max_translate_abs=(10, 20))
    assert wide[0].mag_range == (0, 20) and wide[1].mag_range == (0, 10)
    assert dict((aug.name, aug.mag_range) for aug in wide)["rotate"] == (0, 135)


def test_argument_errors():
    with pytest.raises(Exception, match="`policy_name` must be a string that takes one of"):
        auto_augment.auto_augment(None, "imagenet")
    with pytest.raises(Exception, match="The `shape` argument must not be specified"):
        auto_augment.auto_augment(None, "reduced_image_net", shape=(2, 2))
    with pytest.raises(Exception, match="`max_translate_abs` cannot be used with image shapes"):
        auto_augment.get_image_net_policy(use_shape=True, max_translate_abs=3)
    with pytest.raises(Exception, match="`max_translate_rel` cannot be used without"):
        rand_augment.get_rand_augment_suite(max_translate_rel=0.3)
    with pytest.raises(Exception, match="`use_shape` is a flag"):
        trivial_augment.get_trivial_augment_wide_suite(use_shape=1)
    with pytest.raises(Exception, match="`n` must be a non-negative integer, got -1"):
        rand_augment.rand_augment(None, n=-1, m=3)
    with pytest.raises(Exception, match="`m` must be an integer from `\\[0, 30\\]` range. Got 31"):
        rand_augment.rand_augment(None, n=1, m=31)
    with pytest.raises(Exception, match="`num_magnitude_bins` must be a positive integer"):
        trivial_augment.trivial_augment_wide(None, num_magnitude_bins=0)
    with pytest.raises(Exception, match="The `blur` was specified in `excluded`"):
        rand_augment.rand_augment(None, n=1, m=3, excluded=["blur"])
    with pytest.raises(Exception, match="TrivialAugmentWide suite does not contain"):
        trivial_augment.trivial_augment_wide(None, excluded=["blur"])
    with pytest.raises(Exception, match="list cannot be empty"):
        trivial_augment.apply_trivial_augment([], None)
    with pytest.raises(Exception, match="Cannot run empty policy"):
        auto_augment.apply_auto_augment(Policy("empty", 3, []), None)


def test_rand_augment_with_n_zero_warns_and_returns_the_data():
    with pytest.warns(Warning, match="n=0"):
        assert rand_augment.rand_augment("batch", n=0, m=3) == "batch"


def test_missing_shape_for_relative_translation_is_explained():
    policy = Policy("p", 3, [[(a.translate_x, 1.0, 1)]])
    with pytest.raises(Exception, match="requires `shape` argument"):
        run_on(many_images(2), lambda d: auto_augment.apply_auto_augment(policy, d))


@pytest.mark.parametrize("suite", ["auto", "rand", "trivial"])
def test_missing_shape_is_reported_before_any_augmentation_is_traced(suite):
    @augmentation
    def refuses_to_trace(data, _):
        raise RuntimeError("traced")

    def graph(data):
        if suite == "auto":
            policy = Policy("p", 3, [[(refuses_to_trace, 1.0, None), (a.translate_y, 1.0, 1)]])
            return auto_augment.apply_auto_augment(policy, data)
        augs = [refuses_to_trace, a.translate_y]
        if suite == "rand":
            return rand_augment.apply_rand_augment(augs, data, n=1, m=2)
        return trivial_augment.apply_trivial_augment(augs, data)

    with pytest.raises(Exception, match="`translate_y` requires `shape` argument"):
        run_on(many_images(2), graph)


def _random_policy(draw_rows):
    pool = [a.invert, a.equalize, a.rotate, a.identity, a.posterize]
    sub_policies = [
        [(pool[aug], 0.5, None if pool[aug].mag_range is None else 1) for aug in row]
        for row in draw_rows
    ]
    return Policy("random", 5, sub_policies)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=4), min_size=1, max_size=6))
def test_augmentation_matrix_names_each_stage_of_each_sub_policy(rows):
    policy = _random_policy(rows)
    matrix, per_stage = auto_augment._sub_policy_to_augmentation_matrix_map(policy)
    assert matrix.shape == (len(rows), max(len(row) for row in rows))
    for stage_augs in per_stage:
        assert stage_augs[-1] is a.identity
        assert len({id(aug) for aug in stage_augs[:-1]}) == len(stage_augs) - 1
    for i, sub_policy in enumerate(policy.sub_policies):
        for stage in range(matrix.shape[1]):
            chosen = per_stage[stage][matrix[i, stage]]
            expected = sub_policy[stage][0] if stage < len(sub_policy) else a.identity
            assert chosen is expected


def test_excluded_augmentations_never_run():
    images = many_images(24)
    keep = {"invert", "identity", "rotate"}  # a geometric one takes fill_value, as in DALI
    excluded = [aug.name for aug in rand_augment.get_rand_augment_suite() if aug.name not in keep]
    outs = run_on(images, lambda d: rand_augment.rand_augment(d, n=1, m=0, excluded=excluded))
    for out, image in zip(outs, images, strict=True):
        assert np.array_equal(out, image) or np.array_equal(out, 255 - image)


def test_pipelines_on_real_images():
    root = str(feedline.data.path("file_tree"))

    @pipeline_def(batch_size=6, num_threads=2, device_id=None, seed=1, enable_conditionals=True)
    def pipe():
        jpegs, _ = fn.readers.file(file_root=root)
        shapes = fn.peek_image_shape(jpegs)
        images = fn.decoders.image(jpegs)
        augmented = auto_augment.auto_augment(images, shape=shapes)
        augmented = rand_augment.rand_augment(augmented, n=2, m=9, shape=shapes)
        augmented = trivial_augment.trivial_augment_wide(augmented)
        return images, augmented

    pipeline = pipe()
    pipeline.build()
    originals, augmented = pipeline.run()
    for original, out in zip(originals, augmented, strict=True):
        assert np.asarray(out).shape == np.asarray(original).shape


def test_import_feedline_does_not_import_auto_aug():
    code = "import sys, feedline; print('feedline.auto_aug' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
