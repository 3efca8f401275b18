"""The command itself: --version, plain-text help, exit codes and a closed output pipe."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from feedline import __version__
from feedline.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"feedline {__version__}"


@pytest.mark.parametrize("argv", [["--help"], ["ops", "--help"], ["demo", "--help"]])
def test_help_is_plain_text_and_documents_exit_codes(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    assert "``" not in out and ":class:" not in out
    assert "exit status:" in out and "141" in out


def test_bad_arguments_exit_with_two(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["no-such-command"])
    assert exit_info.value.code == 2


def test_a_closed_pipe_ends_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader (e.g. head) is gone before anything is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "feedline.cli.main", "ops", "decoders.image"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 141
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr
