"""Skinmodes: physically based secondary motion for rigged characters.

Registers the settings, the panel in the 3D Viewport's sidebar (tab
"Secondary Motion"), the operators, the live-preview handlers and the
``skinmodes`` command-line command.  ``unregister`` removes every one of them.
"""

from __future__ import annotations

from . import cli, operators, preview, props, ui

MODULES = (props, operators, ui, preview, cli)


def register() -> None:
    for module in MODULES:
        module.register()


def unregister() -> None:
    for module in reversed(MODULES):
        module.unregister()
