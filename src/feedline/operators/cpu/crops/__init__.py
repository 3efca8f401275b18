"""Family ``crops``: random crop windows (``roi_random_crop``, ``ssd_random_crop``) and
``multi_paste``."""
