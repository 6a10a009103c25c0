"""Run the ``skinmodes`` command with the bpy module (tests, the demo, pipelines without a Blender binary).

    python -m tools.skinmodes_cli bake --blend shot.blend --object Body --frames 1-120 --output pc2

It is the same entry point as ``blender -b shot.blend --command skinmodes bake ...``: the extension's
``cli.main``.  The extension must be installed in this Blender user profile; with ``--install ZIP`` it
is installed first (into BLENDER_USER_RESOURCES if set).
"""

from __future__ import annotations

import importlib
import os
import sys

from testkit.blender_process import leave


def main(argv: list[str]) -> int:
    zip_path = None
    if argv[:1] == ["--install"]:
        if len(argv) < 2:
            print("skinmodes: usage error: --install needs the extension zip", file=sys.stderr)
            return 2
        zip_path, argv = argv[1], argv[2:]
    import bpy

    if zip_path:
        # Blender reports the install on stdout; the command's stdout is its JSON summary alone.
        saved = os.dup(1)
        try:
            sys.stdout.flush()
            os.dup2(2, 1)
            bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
            sys.stdout.flush()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
    name = next((m for m in bpy.context.preferences.addons.keys() if m.endswith(".skinmodes")), None)
    if name is None:
        print(
            "skinmodes: error: the skinmodes extension is not installed in this Blender profile; "
            "pass --install path/to/skinmodes.zip",
            file=sys.stderr,
        )
        return 1
    cli = importlib.import_module(name + ".cli")
    return cli.main(argv)


if __name__ == "__main__":
    leave(main(sys.argv[1:]))
