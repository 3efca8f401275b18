"""What the CPU families' schema modules share: argument specs several families use, and
registering a family's schemas with their CPU kernels.

Light on purpose (core only): every family's plugin module imports it at plugin load.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from feedline.core.schema import ArgSpec, InputSpec, OpSchema

if TYPE_CHECKING:
    from feedline.core.registry import Registry

__all__ = ["OUTPUT_DTYPE_ALIAS", "dtype_arg", "image_input", "register_cpu_operators"]

#: DALI's deprecated ``output_dtype`` spelling of ``dtype``.
OUTPUT_DTYPE_ALIAS = {"output_dtype": "dtype"}


def dtype_arg(
    doc: str = "Output data type; default: the input's.", default: object = None
) -> ArgSpec:
    """The ``dtype`` argument of an operator whose output type is selectable."""
    return ArgSpec("dtype", "dtype", default, doc)


def image_input(doc: str, layouts: tuple[str, ...] | None = None) -> tuple[InputSpec, ...]:
    """The single ``input`` of an operator on images, with the layouts it accepts."""
    return (InputSpec("input", doc, layouts=layouts),)


def register_cpu_operators(
    registry: Registry, schemas: Iterable[OpSchema], kernels: Mapping[str, str]
) -> None:
    """Register each schema with its CPU kernel, ``kernels[schema.name]`` (a ``"module:attr"``
    string, imported on first use)."""
    for schema in schemas:
        registry.add_operator(schema, kernels={"cpu": kernels[schema.name]})
