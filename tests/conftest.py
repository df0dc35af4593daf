"""Imported by pytest before the test modules: ``hri`` first, so that its BLAS kernel is pinned
before a test module imports numpy (``hri/__init__.py``)."""

import hri  # noqa: F401
