"""Printing operators for debugging (module path as upstream)."""

from feedline.plugins.structured.helpers import print_tensor_op, print_tensor_size_op

__all__ = ["print_tensor_op", "print_tensor_size_op"]
