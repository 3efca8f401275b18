"""The ``optical_flow`` kernel: always refuses, naming the hardware DALI uses."""

from __future__ import annotations

from feedline.core.kernel import SampleKernel

__all__ = ["OpticalFlowKernel"]


class OpticalFlowKernel(SampleKernel):
    """Raises at build: optical flow needs NVIDIA's optical-flow engine."""

    def setup(self) -> None:
        """Refuse.

        Raises:
            RuntimeError: always.
        """
        raise RuntimeError(
            "optical_flow needs a GPU: DALI computes it on the optical-flow engine of NVIDIA "
            "GPUs (Turing or newer), and feedline has no implementation of it"
        )
