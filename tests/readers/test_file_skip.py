"""``on_error="skip"`` end to end: damaged JPEGs among good ones through ``readers.file →
decoders.image → resize``, checkpoints, thread counts and framework iterators."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from feedline import fn, pipeline_def
from feedline.core.errors import OperatorError
from feedline.core.pipeline import Pipeline
from feedline.plugins.numpy import GenericIterator

BAD = {3: "truncated", 6: "garbage"}
N = 14


def write_jpegs(root: Path, damaged: bool = True) -> Path:
    """N small JPEGs (file i is filled with grey level 10 * i); BAD ones are damaged."""
    (root / "cls").mkdir(parents=True)
    for i in range(N):
        buffer = io.BytesIO()
        Image.fromarray(np.full((24, 32, 3), 10 * i, np.uint8)).save(buffer, "JPEG")
        data = buffer.getvalue()
        if damaged and BAD.get(i) == "truncated":
            data = data[:60]
        elif damaged and BAD.get(i) == "garbage":
            data = b"\xff\xd8\xff" + bytes(range(200))
        (root / "cls" / f"{i:02d}.jpg").write_bytes(data)
    return root


@pytest.fixture
def jpeg_root(tmp_path: Path) -> Path:
    return write_jpegs(tmp_path / "damaged")


def train(
    root: Path, threads: int = 2, decoder_on_error: str | None = None, **kwargs: Any
) -> Pipeline:
    @pipeline_def(batch_size=4, num_threads=threads, device_id=None, seed=3)
    def pipe() -> Any:
        jpegs, labels = fn.readers.file(file_root=str(root), name="Reader")
        images = fn.decoders.image(jpegs, name="my_decoder", on_error=decoder_on_error)
        return fn.resize(images, size=(8, 8)), labels

    return pipe(**kwargs)


def levels(images: Any) -> list[int]:
    """The file index of each sample (its grey level / 10)."""
    return [round(float(np.asarray(images[i]).mean()) / 10) for i in range(len(images))]


def good_stream() -> list[int]:
    return [i for i in range(N) if i not in BAD]


def test_damaged_jpegs_are_skipped_in_reader_order(
    jpeg_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pipe = train(jpeg_root, on_error="skip", prefetch_queue_depth=1)
    pipe.build()
    seen = []
    with caplog.at_level(logging.WARNING, logger="feedline"):
        for _ in range(3):  # 12 = the epoch's good files
            images, _labels = pipe.run()
            assert len(images) == 4
            assert images.as_array().shape == (4, 8, 8, 3)
            seen += levels(images)
    assert seen == good_stream()
    errors = pipe.executor_statistics()["errors"]
    assert [(e["operator"], Path(e["source_info"]).name) for e in errors] == [
        ("my_decoder", "03.jpg"),
        ("my_decoder", "06.jpg"),
    ]
    assert all(e["error"] for e in errors)
    messages = [r.getMessage() for r in caplog.records if r.name == "feedline"]
    assert len(messages) == 2
    assert "03.jpg" in messages[0] and "'my_decoder'" in messages[0]
    pipe.close()


def test_without_skip_the_damaged_jpeg_names_the_users_decoder(jpeg_root: Path) -> None:
    pipe = train(jpeg_root)
    pipe.build()
    with pytest.raises(OperatorError, match="03.jpg") as info:
        pipe.run()
    assert info.value.operator == "my_decoder"
    pipe.close()


def test_the_decoders_own_skip_survives_its_fusion_with_resize(jpeg_root: Path) -> None:
    pipe = train(jpeg_root, decoder_on_error="skip", prefetch_queue_depth=1)
    pipe.build()
    seen = [v for _ in range(3) for v in levels(pipe.run()[0])]
    assert seen == good_stream()
    assert pipe.on_error == "raise"
    assert [e["operator"] for e in pipe.executor_statistics()["errors"]] == ["my_decoder"] * 2
    pipe.close()


def test_skip_outputs_are_the_same_for_any_thread_count(jpeg_root: Path) -> None:
    outputs = []
    for threads in (1, 3):
        pipe = train(jpeg_root, threads=threads, on_error="skip")
        pipe.build()
        outputs.append([pipe.run()[0].as_array() for _ in range(5)])
        pipe.close()
    for a, b in zip(*outputs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_checkpoint_resume_across_a_skipped_jpeg(jpeg_root: Path) -> None:
    pipe = train(jpeg_root, on_error="skip", enable_checkpointing=True)
    pipe.build()
    pipe.run()  # 0, 1, 2, 4: file 3 was replaced, the reader carries 5..7
    state = pipe.checkpoint()
    rest = [pipe.run()[0].as_array() for _ in range(4)]
    pipe.close()
    resumed = train(jpeg_root, on_error="skip", checkpoint=state)
    resumed.build()
    for expected in rest:
        np.testing.assert_array_equal(resumed.run()[0].as_array(), expected)
    resumed.close()


def epoch_lengths(pipe: Pipeline, epochs: int) -> list[int]:
    iterator = GenericIterator(pipe, ["images", "labels"], reader_name="Reader")
    lengths = []
    for _ in range(epochs):
        batches = [batch[0]["images"] for batch in iterator]
        assert all(b.shape == (4, 8, 8, 3) for b in batches)
        lengths.append(len(batches))
        iterator.reset()
    return lengths


def test_iterator_epochs_keep_their_length_with_skip(jpeg_root: Path, tmp_path: Path) -> None:
    clean = epoch_lengths(train(write_jpegs(tmp_path / "clean", damaged=False)), 3)
    assert epoch_lengths(train(jpeg_root, on_error="skip"), 3) == clean
