"""A third-party plugin that adds kernels to operators it does not own: a ``gpu`` kernel for
``flip`` (owned by a built-in CPU plugin) and kernels for the core's CPU/GPU transfers.

The "GPU" is fake (NumPy on the CPU), so a pipeline using it runs on any machine.
"""

import numpy as np

from feedline.core.hookspecs import hookimpl
from feedline.core.kernel import Kernel
from feedline.core.tensor import TensorListCPU


class FakeTransferKernel(Kernel):
    def run(self, batch):
        return [batch.inputs[0]]


class FakeGpuFlipKernel(Kernel):
    """Flips HWC images (static ``horizontal``/``vertical`` arguments only)."""

    def run(self, batch):
        images = batch.inputs[0]
        flipped = []
        for image in images.samples():
            if self.args["horizontal"]:
                image = image[:, ::-1]
            if self.args["vertical"]:
                image = image[::-1]
            flipped.append(np.ascontiguousarray(image))
        return [TensorListCPU.from_samples(flipped, images.layout())]


@hookimpl
def feedline_register_kernels(registry):
    registry.add_kernel("flip", "gpu", "fake_gpu_flip_plugin:FakeGpuFlipKernel")
    registry.add_kernel("_transfer_to_gpu", "mixed", FakeTransferKernel)
    registry.add_kernel("_transfer_to_cpu", "gpu", FakeTransferKernel)
