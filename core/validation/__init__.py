"""Validation only, never shipped in the extension: the full-space reference simulator, the test
scenes and the displacement-mode baseline used by the tests and the benchmark.
"""
