"""One example call per public built-in operator, for ``check_operator`` (see test_builtins)."""

from __future__ import annotations

import importlib.util
import io
from typing import Any

import numpy as np
from PIL import Image

from feedline import types
from feedline.operators.cpu.manipulation.schemas import SPELLINGS
from feedline.testing import OperatorExample
from tests.testing.catalogue_examples import CATALOGUE_EXAMPLES, CATALOGUE_SKIPPED
from tests.testing.image_operator_examples import IMAGE_EXAMPLES

_RNG = np.random.default_rng(2024)


def _images(count: int = 3, channels: int = 3) -> list[np.ndarray]:
    shapes = [(24 + 4 * i, 32 - 2 * i) for i in range(count)]
    return [_RNG.integers(0, 256, (*hw, channels), dtype=np.uint8) for hw in shapes]


def _encoded(fmt: str = "JPEG") -> list[np.ndarray]:
    files = []
    for image in _images():
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, fmt)
        files.append(np.frombuffer(buffer.getvalue(), np.uint8))
    return files


def _boxes(count: int = 3) -> list[np.ndarray]:
    """Relative ``[x, y, w, h]`` boxes, two to four per sample."""
    out = []
    for i in range(count):
        xy = _RNG.uniform(0, 0.5, (2 + i, 2))
        wh = _RNG.uniform(0.1, 0.5, (2 + i, 2))
        out.append(np.concatenate([xy, wh], axis=1).astype(np.float32))
    return out


def _ltrb(count: int = 3) -> list[np.ndarray]:
    return [np.concatenate([b[:, :2], b[:, :2] + b[:, 2:]], axis=1) for b in _boxes(count)]


def _labels(boxes: list[np.ndarray]) -> list[np.ndarray]:
    return [np.arange(1, len(b) + 1, dtype=np.int32) for b in boxes]


def _floats(count: int = 3) -> list[np.ndarray]:
    return [_RNG.normal(0, 1, (5 + i, 3)).astype(np.float32) for i in range(count)]


def _double(sample: Any) -> Any:
    return sample * 2


def _videos() -> list[np.ndarray]:
    """Three short MPEG-4 videos of different lengths and sizes (needs PyAV)."""
    from tests.operators.cpu.video.test_decoder import encode

    return [encode(4 + i, (16 + 8 * i, 32)) for i in range(3)]


IMAGES, HWC = [_images()], ["HWC"]
LTRB = _ltrb()
FLOATS = [_floats()]
HAS_AV = importlib.util.find_spec("av") is not None
HAS_LZ4 = importlib.util.find_spec("lz4") is not None


def _lz4_blocks() -> list[np.ndarray]:
    import lz4.block

    data = [np.arange(12, dtype=np.int16) + i for i in range(3)]
    return [
        np.frombuffer(lz4.block.compress(d.tobytes(), store_size=False), np.uint8) for d in data
    ]


EXAMPLES: dict[str, OperatorExample] = {
    "bb_flip": OperatorExample([_boxes()]),
    "bbox_paste": OperatorExample([_boxes()], args={"ratio": 2.0}),
    "box_encoder": OperatorExample(
        [LTRB, _labels(LTRB)],
        args={"anchors": [0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0]},
    ),
    "brightness": OperatorExample(IMAGES, HWC, {"brightness": 1.3}),
    "brightness_contrast": OperatorExample(IMAGES, HWC, {"brightness": 0.9, "contrast": 1.2}),
    "cast": OperatorExample(FLOATS, args={"dtype": types.INT32}),
    "color_space_conversion": OperatorExample(
        IMAGES, HWC, {"image_type": types.RGB, "output_type": types.YCbCr}
    ),
    "color_twist": OperatorExample(IMAGES, HWC, {"hue": 20.0, "saturation": 0.7}),
    "constant": OperatorExample(args={"fdata": [1.0, 2.0, 3.0], "shape": [3]}),
    "contrast": OperatorExample(IMAGES, HWC, {"contrast": 1.5}),
    "coord_flip": OperatorExample([[np.asarray(b[:, :2]) for b in _boxes()]], ["xy"]),
    "coord_transform": OperatorExample(FLOATS, args={"M": [2.0], "T": [1.0, 0.0, -1.0]}),
    "copy": OperatorExample(IMAGES, HWC),
    "crop": OperatorExample(IMAGES, HWC, {"crop": [16.0, 16.0]}),
    "crop_mirror_normalize": OperatorExample(
        IMAGES, HWC, {"crop": [16.0, 16.0], "mean": [128.0], "std": [64.0], "mirror": 1}
    ),
    "cast_like": OperatorExample([FLOATS[0], [np.zeros(1, np.int16)] * 3]),
    "cat": OperatorExample([FLOATS[0], _floats()], args={"axis": 1}),
    "decoders.image": OperatorExample([_encoded()]),
    "decoders.image_crop": OperatorExample([_encoded()], args={"crop": [12.0, 12.0]}),
    "decoders.image_random_crop": OperatorExample([_encoded("PNG")]),
    "decoders.image_slice": OperatorExample(
        [_encoded()], args={"rel_start": [0.25, 0.25], "rel_shape": [0.5, 0.5]}
    ),
    "erase": OperatorExample(
        IMAGES,
        HWC,
        {
            "anchor": [2.0, 3.0, 10.0, 1.0],
            "shape": [5.0, 6.0, 4.0, 8.0],
            "axis_names": "HW",
            "fill_value": [255.0, 0.0, 10.0],
        },
    ),
    "expand_dims": OperatorExample(FLOATS, ["ab"], {"axes": [0, 2], "new_axis_names": "XY"}),
    "external_source": OperatorExample(
        args={"source": lambda: [np.full((2,), i, np.int32) for i in range(3)], "batch": True},
        batch_size=3,
    ),
    "flip": OperatorExample(IMAGES, HWC, {"horizontal": 1, "vertical": 1}),
    "gaussian_blur": OperatorExample(IMAGES, HWC, {"sigma": [1.5, 0.8]}),
    "grid_mask": OperatorExample(IMAGES, HWC, {"tile": 8, "ratio": 0.4, "angle": 0.3}),
    "hsv": OperatorExample(IMAGES, HWC, {"hue": 30.0, "value": 0.8}),
    "hue": OperatorExample(IMAGES, HWC, {"hue": 45.0}),
    "jitter": OperatorExample(IMAGES, HWC, {"nDegree": 3, "fill_value": 7.0}),
    "noise.gaussian": OperatorExample(IMAGES, HWC, {"stddev": 10.0}),
    "normalize": OperatorExample(FLOATS),
    "one_hot": OperatorExample(
        [[np.array([0, 3, 1], np.int32), np.array([2], np.int32), np.array([5, 0], np.int32)]],
        args={"num_classes": 4, "dtype": types.UINT8, "on_value": 9.0},
    ),
    "pad": OperatorExample(FLOATS, args={"fill_value": -1.0}),
    "paste": OperatorExample(IMAGES, HWC, {"ratio": 1.5, "fill_value": [0, 0, 0]}),
    "peek_image_shape": OperatorExample([_encoded()]),
    "python_function": OperatorExample(FLOATS, args={"function": _double}),
    "random.choice": OperatorExample([[np.array(5, np.int32)] * 4]),
    "random.coin_flip": OperatorExample(args={"probability": 0.3}, batch_size=4),
    "random.normal": OperatorExample(args={"shape": [3]}, batch_size=4),
    "random.uniform": OperatorExample(args={"range": [-1.0, 1.0]}, batch_size=4),
    "random_bbox_crop": OperatorExample(
        [LTRB, _labels(LTRB)], args={"bbox_layout": "xyXY", "scaling": [0.3, 1.0]}
    ),
    "random_resized_crop": OperatorExample(IMAGES, HWC, {"size": [16, 16]}),
    "reshape": OperatorExample(FLOATS, args={"rel_shape": [1.0, 1.0], "layout": "ab"}),
    "resize": OperatorExample(IMAGES, HWC, {"resize_shorter": 20.0}),
    "rotate": OperatorExample(IMAGES, HWC, {"angle": 30.0}),
    "saturation": OperatorExample(IMAGES, HWC, {"saturation": 0.5}),
    "slice": OperatorExample(IMAGES, HWC, {"rel_start": [0.1, 0.2], "rel_shape": [0.5, 0.5]}),
    "squeeze": OperatorExample([[x[None] for x in FLOATS[0]]], ["xab"], {"axis_names": "x"}),
    "stack": OperatorExample([FLOATS[0], _floats()], ["ab", "ab"], {"axis": -1, "axis_name": "s"}),
    "transpose": OperatorExample(IMAGES, HWC, {"perm": [2, 0, 1]}),
    "warp_affine": OperatorExample(IMAGES, HWC, {"matrix": [1.0, 0.2, 0.0, 0.1, 1.0, 0.0]}),
}
EXAMPLES.update(CATALOGUE_EXAMPLES)
EXAMPLES["experimental.peek_image_shape"] = EXAMPLES["peek_image_shape"]
EXAMPLES.update(IMAGE_EXAMPLES)
EXAMPLES.update(
    {old: EXAMPLES[current] for old, current in SPELLINGS.items() if current in EXAMPLES}
)
if HAS_AV:
    EXAMPLES["decoders.video"] = OperatorExample([_videos()], args={"sequence_length": 3})
    EXAMPLES["experimental.decoders.video"] = EXAMPLES["decoders.video"]

if HAS_LZ4:
    EXAMPLES["decoders.inflate"] = OperatorExample(
        [_lz4_blocks()], args={"shape": [3, 4], "dtype": types.INT16}
    )
    EXAMPLES["experimental.inflate"] = EXAMPLES["decoders.inflate"]


HAS_SOUNDFILE = importlib.util.find_spec("soundfile") is not None


def _signals(count: int = 3) -> list[np.ndarray]:
    return [_RNG.standard_normal(400 + 50 * i).astype(np.float32) * 0.3 for i in range(count)]


def _wav_files() -> list[np.ndarray]:
    import soundfile

    files = []
    for signal in _signals():
        buffer = io.BytesIO()
        soundfile.write(buffer, signal, 16000, format="WAV", subtype="PCM_16")
        files.append(np.frombuffer(buffer.getvalue(), np.uint8))
    return files


_SPECTRA = [[np.abs(_RNG.standard_normal((65, 5 + i))).astype(np.float32) for i in range(3)]]
EXAMPLES.update({
    "audio_resample": OperatorExample([_signals()], args={"scale": 0.75}),
    "experimental.audio_resample": OperatorExample([_signals()], args={"scale": 0.75}),
    "spectrogram": OperatorExample([_signals()], args={"nfft": 64, "window_length": 64,
                                                       "window_step": 32}),
    "power_spectrum": OperatorExample([_signals()]),
    "mel_filter_bank": OperatorExample(_SPECTRA, args={"nfilter": 16, "sample_rate": 16000.0}),
    "mfcc": OperatorExample(_SPECTRA, args={"n_mfcc": 10}),
    "to_decibels": OperatorExample(_SPECTRA),
    "preemphasis_filter": OperatorExample([_signals()]),
    "nonsilent_region": OperatorExample([_signals()], args={"window_length": 64,
                                                            "reset_interval": 128}),
})  # fmt: skip
if HAS_SOUNDFILE:
    for _name in ("decoders.audio", "audio_decoder"):
        EXAMPLES[_name] = OperatorExample([_wav_files()], args={"sample_rate": 12000.0})

SKIPPED = {} if HAS_AV else {"decoders.video": "PyAV (the 'av' package) is not installed",
                             "experimental.decoders.video": "PyAV is not installed"}  # fmt: skip
if not HAS_SOUNDFILE:
    SKIPPED |= {name: "soundfile is not installed" for name in ("decoders.audio", "audio_decoder")}
SKIPPED |= CATALOGUE_SKIPPED
SKIPPED["optical_flow"] = "needs NVIDIA's optical-flow hardware; refuses to build by design"
if not HAS_LZ4:
    SKIPPED["decoders.inflate"] = "the 'lz4' package (feedline[lz4]) is not installed"
    SKIPPED["experimental.inflate"] = SKIPPED["decoders.inflate"]
"""Operators whose example cannot be built here, with the reason."""

"""Readers are checked by ``check_reader`` (and run here only through their schema checks)."""

READERS = (
    "readers.coco",
    "readers.file",
    "readers.numpy",
    "readers.tfrecord",
    "coco_reader",
    "file_reader",
    "numpy_reader",
    "tfrecord_reader",
    "readers.webdataset",
    "readers.nemo_asr",
    "nemo_asr_reader",
    "readers.video",
    "readers.video_resize",
    "experimental.readers.video",
    "video_reader",
    "video_reader_resize",
    "readers.sequence",
    "sequence_reader",
    "readers.caffe",
    "readers.caffe2",
    "caffe_reader",
    "caffe2_reader",
    "readers.mxnet",
    "mxnet_reader",
    "experimental.readers.fits",
)
