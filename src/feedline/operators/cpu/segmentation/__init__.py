"""Family ``segmentation``: ``segmentation.select_masks`` and ``segmentation.random_mask_pixel``."""
