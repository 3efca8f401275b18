"""Family ``crops``: random crop windows (``random_crop_generator``, ``roi_random_crop``,
``ssd_random_crop``) and ``multi_paste``."""
