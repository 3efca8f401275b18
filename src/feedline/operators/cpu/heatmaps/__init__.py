"""Family ``heatmaps``: drawing object heatmaps (CenterNet-style Gaussians)."""
