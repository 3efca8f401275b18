"""Built-in CPU operators, each family registered by its own plugin module."""
