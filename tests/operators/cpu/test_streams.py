"""Family ``streams``: optical_flow refuses with a clear error; experimental.decoders.video is
decoders.video under DALI's experimental name."""

from __future__ import annotations

import numpy as np
import pytest

from feedline.core.plugins import PluginSystem
from feedline.operators.cpu.streams import schemas as streams
from feedline.testing import OperatorExample, check_operator
from tests.operators.cpu.families import use_families
from tests.operators.cpu.image_samples import run_op


def test_optical_flow_needs_a_gpu(empty_plugin_system: PluginSystem) -> None:
    use_families(empty_plugin_system, "python", "tensor")
    empty_plugin_system.register(streams, "streams")
    assert check_operator("optical_flow") == ["schema", "docs"]
    frames = np.zeros((2, 8, 8, 3), np.uint8)
    with pytest.raises(Exception, match="optical_flow needs a GPU"):
        run_op("optical_flow", [frames], "FHWC")


def test_experimental_video_decoder_is_the_video_decoder(empty_plugin_system: PluginSystem) -> None:
    av = pytest.importorskip("av", reason="decoders.video needs PyAV")
    use_families(empty_plugin_system, "python", "tensor", "video")
    empty_plugin_system.register(streams, "streams")
    import io

    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("mpeg4", rate=5)
        stream.height, stream.width, stream.pix_fmt = 16, 16, "yuv420p"
        for k in range(3):
            image = np.full((16, 16, 3), 40 * (k + 1), np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    data = np.frombuffer(buffer.getvalue(), np.uint8)
    (plain,), _ = run_op("decoders.video", [data], None)
    (aliased,), layout = run_op("experimental.decoders.video", [data], None)
    assert layout == "FHWC"
    np.testing.assert_array_equal(plain, aliased)
    assert check_operator("experimental.decoders.video", OperatorExample(inputs=[[data, data]]))
