"""Family ``audio``: schemas and registration of DALI's audio operators (CPU, NumPy).

``decoders.audio`` reads files through libsndfile (``pip install 'feedline[audio]'``); the
operator is always registered and a pipeline using it without ``soundfile`` installed fails at
build with an ImportError naming the extra. Everything else is NumPy.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import ArgSpec, InputSpec, OpSchema
from feedline.core.types import DataType
from feedline.operators.cpu.common.schemas import register_cpu_operators

if TYPE_CHECKING:
    from feedline.core.registry import Registry

_KERNELS = "feedline.operators.cpu.audio"

_QUALITY = ArgSpec("quality", "float", 50.0, "Resampling quality in [0, 100]: the windowed "
                   "sinc has 3 lobes at 0, 16 at 50 and 64 at 100 "
                   "(round(0.007 q² - 0.09 q + 3)).")  # fmt: skip

_SIGNAL = (InputSpec("input", "Audio samples: 1-D, or 2-D (time, channels)."),)

DECODE = OpSchema(
    "decoders.audio",
    """Decode audio files (WAV, FLAC, OGG/Vorbis and every format of the installed libsndfile)
    held in memory.

    Outputs the samples and the sample rate (float32 scalar, Hz). Samples are
    ``(time, channels)`` with interleaved channels, or 1-D with ``downmix`` (the channels'
    mean). ``INT16``/``INT32`` outputs are the file's values at that width; ``FLOAT`` values
    are in [-1, 1]. With ``sample_rate``, the audio is resampled with ``audio_resample``'s
    windowed-sinc filter and the second output is the new rate. A file that cannot be decoded
    raises an error naming the sample's source.""",
    inputs=(InputSpec("encoded", "Encoded audio files (1-D uint8 each)."),),
    outputs=("audio", "sample_rate"),
    args=(
        ArgSpec("downmix", "bool", False, "Average all channels into one (1-D output)."),
        ArgSpec("dtype", "dtype", DataType.FLOAT, "Output type: INT16, INT32 or FLOAT."),
        _QUALITY,
        ArgSpec("sample_rate", "float", 0.0, "Target sample rate in Hz; 0 keeps the file's.",
                tensor=True),
    ),
)  # fmt: skip

RESAMPLE = OpSchema(
    "audio_resample",
    """Resample audio with a Hann-windowed sinc filter.

    The ratio is given by exactly one of: ``scale`` (output rate / input rate), ``in_rate``
    with ``out_rate``, or ``out_length`` (samples). Output sample ``j`` is the filtered input
    at position ``j / ratio``; the output has ``ceil(n * ratio)`` samples (``out_length`` when
    given). Like DALI's, the filter is not narrowed when downsampling. Integer inputs are
    normalised (divided by the type's maximum) before filtering; with ``dtype`` the output is
    converted, integer outputs scaled to the type's range and saturated.""",
    inputs=_SIGNAL,
    args=(
        ArgSpec("dtype", "dtype", None, "Output type (default: the input's)."),
        ArgSpec("in_rate", "float", None, "Input sample rate (with out_rate; any unit).",
                tensor=True),
        ArgSpec("out_rate", "float", None, "Output sample rate (with in_rate; any unit).",
                tensor=True),
        ArgSpec("out_length", "int", None, "Requested output length in samples.", tensor=True),
        _QUALITY,
        ArgSpec("scale", "float", None, "Output rate / input rate.", tensor=True),
    ),
)  # fmt: skip

SPECTROGRAM = OpSchema(
    "spectrogram",
    """Short-time Fourier transform power (or magnitude) spectrogram of a 1-D signal.

    The input is one float32 channel: ``(n,)``, ``(n, 1)`` or ``(1, n)`` (or any other shape
    with one extent above 1). Windows of
    ``window_length`` samples, ``window_step`` apart, are multiplied by ``window_fn`` (default:
    the Hann window ``0.5 (1 - cos(2π (t + 0.5) / N))``), zero-padded to ``nfft`` and
    transformed; the output has ``nfft // 2 + 1`` frequency bins. With ``center_windows``,
    window ``k`` is centred on sample ``k * window_step`` and there are ``n // window_step + 1``
    windows, the signal being mirrored (``reflect_padding``) or zero-padded past its ends;
    otherwise only windows inside the signal are taken (``(n - window_length) // window_step +
    1``).""",
    inputs=(InputSpec("input", "1-D float32 signal: (n,), (n, 1) or (1, n)."),),
    args=(
        ArgSpec("center_windows", "bool", True, "Centre window k on sample k * window_step "
                "(padding the signal) instead of starting it there."),
        ArgSpec("layout", "layout", "ft", "Output layout: 'ft' (frequency-major) or 'tf'.",
                choices=("ft", "tf")),
        ArgSpec("nfft", "int", None, "FFT size (default: window_length); at least "
                "window_length."),
        ArgSpec("power", "int", 2, "Exponent of the magnitude: 1 (amplitude) or 2 (power).",
                choices=(1, 2)),
        ArgSpec("reflect_padding", "bool", True, "Mirror the signal past its ends (True) or pad "
                "with zeros; unused without center_windows."),
        ArgSpec("window_fn", "float_vec", None, "The window's window_length samples (default: "
                "Hann)."),
        ArgSpec("window_length", "int", 512, "Window size in samples."),
        ArgSpec("window_step", "int", 256, "Step between windows in samples."),
    ),
)  # fmt: skip

POWER_SPECTRUM = OpSchema(
    "power_spectrum",
    """Power spectrum (or magnitude) of the signal along one axis.

    The axis is zero-padded or cut to ``nfft`` samples and replaced by ``nfft // 2 + 1``
    frequency bins holding ``re² + im²`` (``power=2``) or ``sqrt(re² + im²)`` (``power=1``).""",
    inputs=(InputSpec("input", "Real signal(s), any dimensionality."),),
    args=(
        ArgSpec("axis", "int", -1, "The axis to transform (default: the last)."),
        ArgSpec("nfft", "int", None, "FFT size (default: the length of the axis)."),
        ArgSpec("power", "int", 2, "2: power spectrum; 1: magnitude.", choices=(1, 2)),
    ),
)  # fmt: skip

MEL_FILTER_BANK = OpSchema(
    "mel_filter_bank",
    """Turn a spectrogram into a mel spectrogram with a bank of triangular filters.

    The frequency axis is the layout's ``f`` (without a layout: ``f``, ``ft`` or ``*ft`` by
    dimensionality) and holds ``nfft // 2 + 1`` bins. ``nfilter`` triangles have their corners
    at ``nfilter + 2`` points evenly spaced on the mel scale between ``freq_low`` and
    ``freq_high``; each is linear in Hz between its corners. With ``normalize`` each triangle
    is scaled by ``2 / (f_right - f_left)`` (unit area), else its peak is 1. ``slaney`` is
    linear below 1 kHz and logarithmic above (librosa's default); ``htk`` is
    ``2595 log10(1 + f / 700)``.""",
    inputs=(InputSpec("input", "Spectrogram (float32)."),),
    args=(
        ArgSpec("freq_high", "float", 0.0, "Highest frequency (0: sample_rate / 2)."),
        ArgSpec("freq_low", "float", 0.0, "Lowest frequency."),
        ArgSpec("mel_formula", "str", "slaney", "Hz ↔ mel conversion: 'slaney' or 'htk'.",
                choices=("slaney", "htk")),
        ArgSpec("nfilter", "int", 128, "Number of mel filters."),
        ArgSpec("normalize", "bool", True, "Give each filter unit area (else a peak of 1)."),
        ArgSpec("sample_rate", "float", 44100.0, "Sample rate of the signal, in Hz."),
    ),
)  # fmt: skip

MFCC = OpSchema(
    "mfcc",
    """Mel-frequency cepstral coefficients: a discrete cosine transform of a mel spectrogram
    along ``axis``.

    DCT types 1 to 4 follow their textbook definitions (no factor 2:
    ``X_k = Σ x_n cos(π/N (n + ½) k)`` for type 2); ``normalize`` makes the basis orthonormal
    (types 2 to 4). The first ``n_mfcc`` coefficients are kept. With ``lifter`` L > 0,
    coefficient i is multiplied by ``1 + (L / 2) sin(π (i + 1) / L)``.""",
    inputs=(InputSpec("input", "Mel spectrogram (float32)."),),
    args=(
        ArgSpec("axis", "int", 0, "The axis to transform (not negative)."),
        ArgSpec("dct_type", "int", 2, "DCT type: 1, 2, 3 or 4."),
        ArgSpec("lifter", "float", 0.0, "Cepstral liftering coefficient (0: none)."),
        ArgSpec("n_mfcc", "int", 20, "Number of coefficients kept."),
        ArgSpec("normalize", "bool", False, "Use an orthonormal basis (not with dct_type=1)."),
    ),
)  # fmt: skip

TO_DECIBELS = OpSchema(
    "to_decibels",
    """Convert magnitudes to decibels:
    ``multiplier * log10(max(10 ** (cutoff_db / multiplier), input / reference))``.

    Without ``reference``, each sample's maximum is the reference; a reference of 0 is
    refused.""",
    inputs=(InputSpec("input", "Non-negative magnitudes (float32)."),),
    args=(
        ArgSpec("cutoff_db", "float", -200.0, "Lowest output value, in dB."),
        ArgSpec("multiplier", "float", 10.0, "Factor of the logarithm: 10 for power, 20 for "
                "amplitude."),
        ArgSpec("reference", "float", None, "Reference magnitude (not zero; default: each "
                "sample's maximum)."),
    ),
)  # fmt: skip

PREEMPHASIS = OpSchema(
    "preemphasis_filter",
    """Pre-emphasis filter ``y[t] = x[t] - coeff * x[t - 1]``.

    The sample is filtered as one flat signal. ``x[-1]`` is 0 (``border='zero'``), ``x[0]``
    (``clamp``) or ``x[1]`` (``reflect``). Integer inputs are filtered as they are (not
    normalised); the result is converted to ``dtype`` (rounded and saturated).""",
    inputs=(InputSpec("input", "Signal (any numeric type)."),),
    args=(
        ArgSpec("border", "str", "clamp", "The value before the first sample: 'zero', "
                "'clamp' or 'reflect'.", choices=("zero", "clamp", "reflect")),
        ArgSpec("dtype", "dtype", DataType.FLOAT, "Output type."),
        ArgSpec("preemph_coeff", "float", 0.97, "Pre-emphasis coefficient.", tensor=True),
    ),
)  # fmt: skip

NONSILENT_REGION = OpSchema(
    "nonsilent_region",
    """Find the non-silent part of a 1-D signal.

    The short-term power at sample i is the mean of the squares of the ``window_length``
    samples ending at i (samples before the start count as 0). A sample is loud when its power
    is at least ``reference_power * 10 ** (cutoff_db / 10)`` (reference: the largest
    short-term power, unless given). Outputs the region's first sample — ``window_length - 1``
    before the first loud one, at least 0 — and its length, up to and including the last loud
    sample, as int32 scalars (length 0 when nothing is loud).""",
    inputs=(InputSpec("input", "1-D audio signal."),),
    outputs=("begin", "length"),
    args=(
        ArgSpec("cutoff_db", "float", -60.0, "Silence threshold in dB below the reference."),
        ArgSpec("reference_power", "float", 0.0, "Reference power (0: the largest short-term "
                "power)."),
        ArgSpec("reset_interval", "int", 8192, "How often DALI recomputes its running sum to "
                "bound float error: a multiple of window_length, or -1. feedline sums in "
                "float64, so it only has to be valid."),
        ArgSpec("window_length", "int", 2048, "Size of the short-term power window."),
    ),
)  # fmt: skip

SCHEMAS = (DECODE, RESAMPLE, SPECTROGRAM, POWER_SPECTRUM, MEL_FILTER_BANK, MFCC, TO_DECIBELS,
           PREEMPHASIS, NONSILENT_REGION)  # fmt: skip

KERNELS = {
    "decoders.audio": f"{_KERNELS}.decoder:AudioDecoderKernel",
    "audio_resample": f"{_KERNELS}.resample:AudioResampleKernel",
    "spectrogram": f"{_KERNELS}.spectral:SpectrogramKernel",
    "power_spectrum": f"{_KERNELS}.spectral:PowerSpectrumKernel",
    "mel_filter_bank": f"{_KERNELS}.mel:MelFilterBankKernel",
    "mfcc": f"{_KERNELS}.mel:MfccKernel",
    "to_decibels": f"{_KERNELS}.levels:ToDecibelsKernel",
    "preemphasis_filter": f"{_KERNELS}.levels:PreemphasisKernel",
    "nonsilent_region": f"{_KERNELS}.levels:NonsilentRegionKernel",
}

#: DALI's other names for these operators: name → the operator it stands for.
ALIASES = {"experimental.audio_resample": "audio_resample", "audio_decoder": "decoders.audio"}


@hookimpl
def feedline_register_operators(registry: Registry) -> None:
    """Register the audio operators and DALI's other names for them."""
    register_cpu_operators(registry, SCHEMAS, KERNELS)
    by_name = {schema.name: schema for schema in SCHEMAS}
    for alias, target in ALIASES.items():
        doc = f"DALI's older name of ``{target}``.\n\n{by_name[target].doc}"
        schema = dataclasses.replace(by_name[target], name=alias, doc=doc)
        registry.add_operator(schema, kernels={"cpu": KERNELS[target]})


__all__ = ["ALIASES", "KERNELS", "SCHEMAS", "feedline_register_operators"]
