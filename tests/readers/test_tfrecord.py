"""fn.readers.tfrecord and the index tool: features by definition, defaults, sharding, errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import feedline.readers.tfrecord as tfrecord_plugin
import feedline.tfrecord as tfrec
from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.plugins import PluginSystem, use_plugin_system
from feedline.readers.tfrecord_format import decode_feature, parse_example
from feedline.readers.tfrecord_index import main as index_main
from feedline.readers.tfrecord_index import write_index
from tests.readers.tfrecord_data import example, feature, write_tfrecord


@pytest.fixture(autouse=True)
def registry() -> Iterator[None]:
    system = PluginSystem(autoload=False)
    system.register(tfrecord_plugin, "tfrecord-reader")
    with use_plugin_system(system):
        yield


def make_dataset(root: Path, count: int = 5) -> tuple[str, str]:
    records = [
        example(
            {
                "image/encoded": feature([f"jpeg{i}".encode()]),
                "image/class/label": feature([i - 2]),
                "bbox": feature([0.25 * i, 0.5, 1.0, 2.0], packed=i % 2 == 0),
            }
        )
        for i in range(count)
    ]
    path = root / "train.tfrecord"
    write_tfrecord(path, records)
    index = root / "train.idx"
    assert index_main([str(path), str(index)]) == 0
    return str(path), str(index)


FEATURES = {
    "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
    "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "bbox": tfrec.VarLenFeature([2], tfrec.float32, 0.0),
    "missing": tfrec.FixedLenFeature([2], tfrec.float32, 9.5),
}


def run_reader(batch_size: int, iterations: int = 1, **kwargs: Any) -> list[dict[str, Any]]:
    @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=1)
    def pipe() -> Any:
        outputs = fn.readers.tfrecord(name="Reader", **kwargs)
        assert isinstance(outputs, dict)
        return tuple(outputs.values())

    p = pipe()
    try:
        p.build()
        names = list(kwargs["features"])
        batches = []
        for _ in range(iterations):
            out = p.run()
            batch = {
                n: [tl.at(i) for i in range(len(tl))] for n, tl in zip(names, out, strict=True)
            }
            batch["sources"] = out[0].source_infos()
            batches.append(batch)
        return batches
    finally:
        p.close()


def test_reads_every_feature_type_and_default(tmp_path: Path) -> None:
    path, index = make_dataset(tmp_path)
    (batch,) = run_reader(5, path=[path], index_path=[index], features=FEATURES)
    assert [bytes(b) for b in batch["image/encoded"]] == [f"jpeg{i}".encode() for i in range(5)]
    assert [x.tolist() for x in batch["image/class/label"]] == [[i - 2] for i in range(5)]
    assert batch["image/class/label"][0].dtype == np.int64
    assert batch["bbox"][3].tolist() == [[0.75, 0.5], [1.0, 2.0]]
    assert batch["bbox"][3].dtype == np.float32
    assert batch["missing"][0].shape == (0,) and batch["missing"][0].dtype == np.float32


def test_sharding_shuffling_and_source_info(tmp_path: Path) -> None:
    path, index = make_dataset(tmp_path, 6)
    features = {"image/class/label": tfrec.FixedLenFeature([], tfrec.int64, -1)}
    (batch,) = run_reader(
        3, path=[path], index_path=[index], features=features, num_shards=2, shard_id=1
    )
    assert [x.tolist() for x in batch["image/class/label"]] == [[1], [2], [3]]
    offsets = [int(line.split()[0]) for line in Path(index).read_text().splitlines()]
    assert batch["sources"] == [f"{path} at index {o}" for o in offsets[3:]]
    batches = run_reader(
        3, 2, path=[path], index_path=[index], features=features, random_shuffle=True
    )
    labels = sorted(int(x[0]) for b in batches for x in b["image/class/label"])
    assert labels == [-2, -1, 0, 1, 2, 3]  # one epoch is a permutation


def test_several_files_in_order(tmp_path: Path) -> None:
    first = tmp_path / "a"
    second = tmp_path / "b"
    first.mkdir()
    second.mkdir()
    pa, ia = make_dataset(first, 2)
    pb, ib = make_dataset(second, 3)
    features = {"image/encoded": tfrec.FixedLenFeature([], tfrec.string, "")}
    (batch,) = run_reader(5, path=[pa, pb], index_path=[ia, ib], features=features)
    assert [bytes(x) for x in batch["image/encoded"]] == [
        b"jpeg0", b"jpeg1", b"jpeg0", b"jpeg1", b"jpeg2"
    ]  # fmt: skip


@settings(max_examples=50)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6),
    st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=6),
    st.lists(st.binary(max_size=20), min_size=1, max_size=1),
    st.booleans(),
)
def test_parser_round_trips_any_values(
    ints: list[int], floats: list[float], strings: list[bytes], packed: bool
) -> None:
    record = np.frombuffer(
        example({"i": feature(ints, packed), "f": feature(floats, packed), "s": feature(strings)}),
        np.uint8,
    )
    parsed = parse_example(record)
    got_ints = decode_feature("i", tfrec.VarLenFeature(tfrec.int64, 0), parsed)
    got_floats = decode_feature("f", tfrec.VarLenFeature(tfrec.float32, 0.0), parsed)
    got_string = decode_feature("s", tfrec.FixedLenFeature([], tfrec.string, ""), parsed)
    assert got_ints.tolist() == ints
    assert got_floats.tolist() == np.array(floats, np.float32).tolist()
    assert bytes(got_string) == strings[0]
    assert np.shares_memory(got_string, record) or not strings[0]  # a view, not a copy


def test_fixed_len_defaults_and_partial_shapes() -> None:
    record = np.frombuffer(example({"x": feature([1, 2, 3]), "s": feature([b"a", b"b"])}), np.uint8)
    parsed = parse_example(record)
    padded = decode_feature("x", tfrec.FixedLenFeature([5], tfrec.int64, -7), parsed)
    assert padded.tolist() == [1, 2, 3, -7, -7]
    assert decode_feature("x", tfrec.VarLenFeature([3], tfrec.int64, 0), parsed).shape == (1, 3)
    assert bytes(decode_feature("s", tfrec.FixedLenFeature([], tfrec.string, ""), parsed)) == b"a"
    missing = decode_feature("y", tfrec.VarLenFeature(tfrec.int64, 0), parsed)
    assert missing.shape == (0,) and missing.dtype == np.int64


def test_feature_errors() -> None:
    record = np.frombuffer(example({"x": feature([1, 2, 3]), "s": feature([b"a", b"b"])}), np.uint8)
    parsed = parse_example(record)
    with pytest.raises(ValueError, match="holds 3 values, more than.*takes \\(2\\)"):
        decode_feature("x", tfrec.FixedLenFeature([2], tfrec.int64, 0), parsed)
    with pytest.raises(ValueError, match="holds int64 values, not float32"):
        decode_feature("x", tfrec.VarLenFeature(tfrec.float32, 0.0), parsed)
    with pytest.raises(ValueError, match="does not fit the partial shape"):
        decode_feature("x", tfrec.VarLenFeature([2], tfrec.int64, 0), parsed)
    with pytest.raises(ValueError, match="tensors of strings are not supported"):
        decode_feature("s", tfrec.VarLenFeature(tfrec.string, ""), parsed)
    with pytest.raises(ValueError, match="not one of int64"):
        tfrec.FixedLenFeature([], "int32", 0)
    with pytest.raises(TypeError, match="VarLenFeature takes"):
        tfrec.VarLenFeature(tfrec.int64)


def test_reader_argument_errors(tmp_path: Path) -> None:
    path, index = make_dataset(tmp_path, 2)
    with pytest.raises(ValueError, match="one index file per TFRecord file"):
        run_reader(1, path=[path], index_path=[], features=FEATURES)
    with pytest.raises(TypeError, match=r"features\['x'\] must be a feedline.tfrecord.Feature"):
        run_reader(1, path=[path], index_path=[index], features={"x": int})
    with pytest.raises(ValueError, match="features is empty"):
        run_reader(1, path=[path], index_path=[index], features={})
    with pytest.raises(TypeError, match="missing required argument 'index_path'"):
        run_reader(1, path=[path], features=FEATURES)
    bad_index = tmp_path / "bad.idx"
    bad_index.write_text("0 12\n")
    with pytest.raises(ValueError, match="does not fit|rebuild"):
        run_reader(1, path=[path], index_path=[str(bad_index)], features=FEATURES)
    shifted = tmp_path / "shifted.idx"
    offsets = Path(index).read_text().split()
    shifted.write_text(f"{offsets[0]} {int(offsets[1]) - 1}\n")
    with pytest.raises(OperatorError, match="the index says"):
        run_reader(1, path=[path], index_path=[str(shifted)], features=FEATURES)


def test_index_tool_matches_the_writer_and_reports_truncation(tmp_path: Path) -> None:
    records = [example({"a": feature([i])}) for i in range(3)]
    expected = write_tfrecord(tmp_path / "t.rec", records)
    assert write_index(str(tmp_path / "t.rec"), str(tmp_path / "t.idx")) == 3
    lines = (tmp_path / "t.idx").read_text().splitlines()
    assert lines == [f"{o} {s}" for o, s in expected]
    (tmp_path / "cut.rec").write_bytes((tmp_path / "t.rec").read_bytes()[:-3])
    with pytest.raises(ValueError, match="past the end"):
        write_index(str(tmp_path / "cut.rec"), str(tmp_path / "cut.idx"))
    with pytest.raises(SystemExit):
        index_main([str(tmp_path / "cut.rec"), str(tmp_path / "cut.idx")])


def test_pipelines_with_tfrecord_are_not_serializable(tmp_path: Path) -> None:
    path, index = make_dataset(tmp_path, 1)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe() -> Any:
        return tuple(
            fn.readers.tfrecord(path=[path], index_path=[index], features=FEATURES).values()
        )

    with pytest.raises(RuntimeError, match=r"readers.tfrecord|serializ"):
        pipe().serialize()
