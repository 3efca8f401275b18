"""The execution layer: runs a built graph (threads, chains, executor, prefetch queue)."""
