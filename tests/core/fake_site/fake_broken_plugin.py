"""A plugin whose import fails, as when a dependency is missing."""

import feedline_dependency_that_does_not_exist  # noqa: F401
