"""Thin command-line scripts over the test kit (``testkit/``); run each from the repository root as
``python -m tools.<name>`` (``--help`` says what it does)."""
