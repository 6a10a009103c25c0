"""Validation only, never shipped in the extension: the full-space reference simulator, the test
scenes, the bent-limb accuracy case and the displacement-mode baseline (tests and benchmark).
"""
