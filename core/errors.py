"""Errors with one-line messages that say what is wrong and what to do.

Every error the core raises on bad input is a :class:`SkinmodesError`.  Its
message is a single line, written for the person who clicked the button:
the add-on shows it verbatim in the status bar, and the CLI prints it as its
last line.
"""

from __future__ import annotations


class SkinmodesError(ValueError):
    """Bad input or an impossible request; the message is one line."""

    def __init__(self, message: str) -> None:
        # Keep messages to one line even when callers format multi-line text.
        super().__init__(" ".join(str(message).split()))


class MeshError(SkinmodesError):
    """The tet mesh or surface cannot be simulated as given."""


class RigError(SkinmodesError):
    """The rig (bone weights, Jacobian, transforms) is unusable."""


class MaterialError(SkinmodesError):
    """Material parameters are out of their physical range."""


class SubspaceError(SkinmodesError):
    """The eigenproblem or clustering cannot deliver what was asked."""


class SimulationError(SkinmodesError):
    """The simulation diverged or was fed non-finite input."""


class CacheError(SkinmodesError):
    """A cache file is corrupt, stale or was written for other inputs."""
