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


def test_an_iteration_in_progress_finishes_before_the_interpreter_exits(tmp_path) -> None:
    """A program that ends while the background thread computes an iteration lets that iteration
    finish (a kernel stopped inside C++ code at finalization can abort the process) and cancels
    the iterations queued behind it."""
    log = tmp_path / "done.txt"
    script = textwrap.dedent(
        """
        import sys, time
        import numpy as np
        from feedline import fn, pipeline_def

        def slow(sample):
            time.sleep(0.3)
            with open(sys.argv[1], "a") as out:
                out.write(f"{int(sample[0])}\\n")
            return sample

        @pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=2)
        def graph():
            data = fn.external_source(source=lambda i: [np.full(1, i, np.int32)], batch=True)
            return fn.python_function(data, function=slow)

        graph().run()  # iteration 1 is being computed in the background when the program ends
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(log)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert log.read_text().split() == ["0", "1"]
