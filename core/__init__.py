"""skinmodes core: rig-complementary skinning eigenmodes and reduced dynamics.

Pure numpy/scipy; never imports bpy.  Every module uses relative imports so the
package works both as ``core`` from a checkout and as
``bl_ext.<repo>.skinmodes.core`` inside the installed Blender extension.
"""

__version__ = "0.1.0"
