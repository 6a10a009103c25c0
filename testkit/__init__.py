"""The test kit: libraries shared by the tests, the benchmark suite and the command-line tools.

Never shipped.  It builds and installs the extension (``build_extension``), runs
a process with the bpy module (``blender_process``), builds the demo creature
(``creature``), loads and measures the real characters (``real_characters``),
dumps their rigs for the core (``rig_dump``), measures where the secondary motion
goes (``where_it_moves``) and builds the benchmark's twisted limb (``limb``).
Everything imports it as ``testkit``, from the repository root.
"""
