"""Family ``warps``: perspective warps and generic remapping."""
