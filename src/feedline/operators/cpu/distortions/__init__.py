"""Family ``distortions``: water and sphere warps, JPEG artefacts, shot and salt-and-pepper
noise."""
