"""A plugin that registers a name another plugin owns."""

from feedline.core.hookspecs import hookimpl
from feedline.core.schema import OpSchema


@hookimpl
def feedline_register_operators(registry):
    registry.add_operator(OpSchema("fake.invert", "A conflicting operator."))
