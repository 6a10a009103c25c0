"""Validation only, never shipped in the extension: the full-space reference simulator, the test
scenes, the bent-limb and contact-fold cases and the displacement-mode baseline (tests, benchmark).
"""
