"""The pass-through output copies (module path and private name as upstream, for ported tests)."""

from feedline.plugins.structured.passthrough_copy import InsertCopyForPassthrough, fn

_InsertCopyForPassthrough = InsertCopyForPassthrough

__all__ = ["InsertCopyForPassthrough", "_InsertCopyForPassthrough", "fn"]
