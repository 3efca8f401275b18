"""Family ``histogram``: histogram equalization, CLAHE and debayering (colour reconstruction)."""
