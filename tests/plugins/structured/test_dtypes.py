"""Element types of graph nodes while the graph is defined, and the assignment check they feed."""

from __future__ import annotations

import numpy as np
import pytest

from feedline import Pipeline, fn, types
from feedline.plugins.structured import SampleDataGroup
from feedline.plugins.structured.dtypes import node_dtype


@pytest.fixture
def pipe() -> Pipeline:
    with Pipeline(batch_size=2, num_threads=1, device_id=None) as p:
        yield p


def test_types_from_sources_arguments_and_inputs(pipe: Pipeline) -> None:
    encoded, label = fn.readers.file(files=["a.jpg"], name="r")
    assert node_dtype(encoded) is types.UINT8 and node_dtype(label) is types.INT32
    outputs = fn.external_source(
        source=lambda i: (0, 0), num_outputs=2, dtype=[types.UINT8, types.INT16], batch=False
    )
    assert [node_dtype(n) for n in outputs] == [types.UINT8, types.INT16]
    single = fn.external_source(source=lambda i: 0, dtype=types.FLOAT64, batch=False)
    assert node_dtype(single) is types.FLOAT64
    assert node_dtype(fn.external_source(source=lambda i: 0, batch=False)) is None
    image = fn.decoders.image(encoded)
    assert node_dtype(image) is types.UINT8
    assert node_dtype(fn.crop_mirror_normalize(image)) is types.FLOAT
    assert node_dtype(fn.crop_mirror_normalize(image, dtype=types.FLOAT16)) is types.FLOAT16
    assert node_dtype(fn.resize(image, size=[4, 4])) is types.UINT8
    assert node_dtype(fn.flip(fn.cast(image, dtype=types.INT32))) is types.INT32
    assert node_dtype(fn.pad(single)) is types.FLOAT64
    assert node_dtype(fn.random.uniform(range=[0, 1])) is types.FLOAT
    assert node_dtype(fn.random.coin_flip()) is types.INT32
    assert node_dtype(fn.python_function(image, function=lambda x: x)) is None


def test_inferred_types_match_the_types_at_run_time() -> None:
    pipe = Pipeline(batch_size=2, num_threads=1, device_id=None, seed=1)
    with pipe:
        x = fn.external_source(
            source=lambda i: np.full((4, 4, 3), 7, np.uint8), dtype=types.UINT8, batch=False
        )
        u = fn.random.uniform(range=[0, 1])
        nodes = [
            x * np.float32(0.5),
            fn.cast(x, dtype=types.INT16) - fn.cast(x, dtype=types.INT16),
            x // fn.cast(x, dtype=types.INT64) < 2,
            fn.cast(x, dtype=types.INT64) / 3,
            fn.cast(x, dtype=types.FLOAT64) + u,
            fn.cast(x < 4, dtype=types.BOOL) & (x > 1),
            x < 3,
            x / 2,
            u * np.array([1, 2], np.float64),
            fn.random.coin_flip() * u,
            fn.crop_mirror_normalize(x),
            fn.resize(x, size=[2, 2]),
            fn.brightness_contrast(x, contrast=u),
            fn.warp_affine(fn.cast(x, dtype=types.FLOAT), matrix=[1, 0, 0, 0, 1, 0]),
            fn.pad(x),
            fn.constant(value=np.int16(3)),
            fn.constant(value=np.array([1.5, 2.5])),
            fn.constant(value=[1, 2]),
            fn.constant(value=2.5, dtype=types.FLOAT64),
            fn.constant(fdata=[1, 2]),
            fn.constant(idata=3),
        ]
        mixed = [x + fn.cast(x, dtype=types.INT16), (x < 3) + (x < 4), x + 1]
    assert [node_dtype(n) for n in mixed] == [None, None, None]  # promotion left to the first batch
    inferred = [node_dtype(n) for n in nodes]
    pipe.set_outputs(*nodes)
    pipe.build()
    actual = [tl.dtype for tl in pipe.run()]
    assert inferred == actual, list(zip(inferred, actual, strict=True))
    assert None not in inferred

    pipe.close()


def test_assigning_a_node_of_the_wrong_type_fails_at_definition(pipe: Pipeline) -> None:
    group = SampleDataGroup()
    group.add_data_field("image", types.UINT8)
    group.add_data_field("text", types.STRING)
    image = fn.external_source(source=lambda i: 0, dtype=types.UINT8, batch=False)
    group["image"] = image
    group["text"] = image
    with pytest.raises(TypeError, match=r"'image' is declared UINT8 .* has type FLOAT"):
        group["image"] = fn.cast(image, dtype=types.FLOAT)
    with pytest.raises(TypeError, match=r"'text' is declared STRING \(carried as UINT8\)"):
        group["text"] = fn.cast(image, dtype=types.INT32)
    group.set_do_check_type(False)
    group["image"] = fn.cast(image, dtype=types.FLOAT)
    assert group["image"] is not image


def test_mapping_is_not_applied_to_nodes_and_warns(pipe: Pipeline) -> None:
    group = SampleDataGroup()
    group.add_data_field("cls", types.INT32, {"a": 1})
    node = fn.external_source(source=lambda i: 0, dtype=types.INT32, batch=False)
    with pytest.warns(UserWarning, match="mappings are not applied"):
        group["cls"] = node
    assert group["cls"] is node
    group.set_apply_mapping(False)
    group["cls"] = node
