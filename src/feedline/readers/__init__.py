"""Readers: the :class:`~feedline.readers.base.Reader` base class and the built-in readers."""
