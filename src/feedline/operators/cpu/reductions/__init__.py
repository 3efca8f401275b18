"""Family ``reductions``: ``reductions.min``/``max``/``sum``/``mean``/``mean_square``/``rms``/
``std_dev``/``variance`` over chosen axes of each sample."""
