"""The arrays plugin registers through its entry point, with generated docs."""

from __future__ import annotations

from importlib.metadata import entry_points

from feedline import fn
from feedline.operators.cpu.arrays.plugin import SCHEMAS


def test_entry_point_names_the_plugin_module() -> None:
    (entry,) = [e for e in entry_points(group="feedline.plugins") if e.name == "arrays"]
    assert entry.value == "feedline.operators.cpu.arrays.plugin"


def test_every_operator_is_in_fn_with_generated_docs() -> None:
    for schema in SCHEMAS:
        function = getattr(fn, schema.name)
        assert function.__doc__.splitlines()[0] == schema.doc.splitlines()[0]
        for arg in schema.args:
            assert f"    {arg.name} (" in function.__doc__
