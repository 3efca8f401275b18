"""Helpers for writing steps and for debugging pipelines."""

from feedline.plugins.structured.helpers import (
    check_type,
    get_as_data_node,
    get_mapped,
    print_tensor_op,
    print_tensor_size_op,
)
from feedline.structured.internal_helpers import mini_parser

__all__ = [
    "check_type",
    "get_as_data_node",
    "get_mapped",
    "mini_parser",
    "print_tensor_op",
    "print_tensor_size_op",
]
