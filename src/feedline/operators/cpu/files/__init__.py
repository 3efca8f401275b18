"""Family ``files``: ``io.file.read`` and ``decoders.numpy``."""
