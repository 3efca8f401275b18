"""Family ``audio``: decoding, resampling, spectra, mel filter banks and silence detection."""
