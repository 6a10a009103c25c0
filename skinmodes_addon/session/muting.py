"""What skinmodes adds to a scene, by name, and how it stands its own things aside while it reads the rig.

:func:`busy` keeps the preview's frame handlers out of skinmodes' own frame
changes; :func:`outputs_muted` hides the outputs (cache and preview
modifiers, baked shape keys) so sampling sees the rig alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import bpy

from ..registry import BUSY

# Names of the things skinmodes adds to a scene, so it only ever removes its own.
CACHE_MODIFIER = "Skinmodes Cache"
PREVIEW_MODIFIER = "Skinmodes Preview"
OFFSET_ATTRIBUTE = "skinmodes_offset"
SHAPE_KEY_PREFIX = "skinmodes."


@contextmanager
def busy() -> Iterator[None]:
    """While skinmodes itself changes frames (sampling, baking), its preview handler stands aside."""
    BUSY[0] += 1
    try:
        yield
    finally:
        BUSY[0] -= 1


def is_busy() -> bool:
    return BUSY[0] > 0


@contextmanager
def outputs_muted(obj: bpy.types.Object) -> Iterator[None]:
    """Temporarily disable skinmodes' own modifiers and shape keys so sampling sees the rig alone."""
    saved: list[tuple[object, str, object]] = []
    for mod in obj.modifiers:
        if mod.name in (CACHE_MODIFIER, PREVIEW_MODIFIER):
            saved.append((mod, "show_viewport", mod.show_viewport))
            mod.show_viewport = False
    keys = obj.data.shape_keys
    if keys is not None:
        for kb in keys.key_blocks:
            if kb.name.startswith(SHAPE_KEY_PREFIX):
                saved.append((kb, "mute", kb.mute))
                kb.mute = True
    try:
        yield
    finally:
        for target, attr, value in reversed(saved):
            setattr(target, attr, value)
