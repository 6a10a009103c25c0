"""Skinmodes: physically based secondary motion for rigged characters.

Registers the settings, the add-on preferences, the material presets, the
panel in the 3D Viewport's sidebar (tab "Secondary Motion"), the operators,
the live-preview handlers, the save and load handlers that delete
superseded point caches once the .blend is saved, and the ``skinmodes`` command-line command.
``unregister`` removes every one of them and clears the per-process registries
(``registry.reset``).

Scripts reach the Python API as ``import skinmodes_api`` however the
extension was installed (``bl_ext.<repository>.skinmodes.api``): the alias
is made on ``register`` and removed on ``unregister``.
"""

from __future__ import annotations

import sys

from . import api, cli, locomotion, material_presets, operators, preferences, preview, props, registry, ui
from .bake import deletion

MODULES = (props, preferences, material_presets, operators, ui, locomotion, preview, deletion, cli)
# The name scripts import the API by, whichever repository holds the extension.
API_ALIAS = "skinmodes_api"


def register() -> None:
    for module in MODULES:
        module.register()
    # Never take the name from another module (another copy of skinmodes enabled from another repository).
    sys.modules.setdefault(API_ALIAS, api)


def unregister() -> None:
    if sys.modules.get(API_ALIAS) is api:
        del sys.modules[API_ALIAS]
    for module in reversed(MODULES):
        module.unregister()
    registry.reset()  # sessions, jobs, errors and pending deletions of this process: none survive a disable
