"""Test helpers for the audio family: a registry with it, one-operator runs, test signals."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np

from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.audio import schemas as audio
from feedline.testing.runner import run_operator
from tests.operators.cpu.families import use_families


def use_audio(system: PluginSystem) -> None:
    """Register the audio family with the families its tests feed it through."""
    use_families(system, "python", "tensor")
    system.register(audio, "audio")


def run_audio(
    name: str,
    samples: Sequence[np.ndarray],
    in_layout: str | None = None,
    num_threads: int = 1,
    arg_inputs: dict[str, Sequence[np.ndarray]] | None = None,
    **args: Any,
) -> list[tuple[list[np.ndarray], str]]:
    """One iteration of ``fn.<name>`` on ``samples``: per output, its samples and layout."""
    (iteration,) = run_operator(
        name, [list(samples)], [in_layout], args, arg_inputs, iterations=1, num_threads=num_threads
    )
    return iteration


def noise(n: int, seed: int = 0, channels: int | None = None, scale: float = 0.3) -> np.ndarray:
    """float32 Gaussian noise, ``(n,)`` or ``(n, channels)``."""
    shape = (n,) if channels is None else (n, channels)
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def encode(samples: np.ndarray, rate: int, fmt: str = "WAV", subtype: str | None = None) -> bytes:
    """An audio file of ``samples`` written by soundfile."""
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format=fmt, subtype=subtype)
    return buffer.getvalue()
