"""``decoders.video`` on the CPU through PyAV (FFmpeg), an optional dependency
(``pip install feedline[video]``); schema in :mod:`.plugin`, kernel in :mod:`.decoder`."""
