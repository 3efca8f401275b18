"""Family ``filters``: convolution (``filter``, ``laplacian``), median blur and morphology."""
