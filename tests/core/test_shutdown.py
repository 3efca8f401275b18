"""A failing or abandoned pipeline never keeps the interpreter alive."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_interpreter_exits_after_an_operator_error_without_close() -> None:
    script = textwrap.dedent(
        """
        import numpy as np
        from feedline import fn, pipeline_def, types

        def source(i):
            if i == 3:
                raise ValueError("bad batch")
            return np.zeros((2, 1), np.float32)

        @pipeline_def(batch_size=2, num_threads=3, device_id=None, prefetch_queue_depth=3)
        def graph():
            return fn.cast(fn.external_source(source=source, batch=True), dtype=types.INT32)

        pipe = graph()
        try:
            for _ in range(10):
                pipe.run()
        except Exception as exc:
            assert "bad batch" in str(exc), exc
            print("raised")
        """
    )
    env_script = "import os; os.environ['FEEDLINE_PLUGINS'] = 'python,tensor'\n" + script
    result = subprocess.run(
        [sys.executable, "-c", env_script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "raised"
