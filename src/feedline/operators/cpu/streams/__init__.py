"""Family ``streams``: DALI's other video operator names (``optical_flow``,
``experimental.decoders.video``)."""
