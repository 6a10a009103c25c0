"""A legless blob (core/locomotion/creatures.py) written into a Blender mesh without an armature."""

import pytest

from core.geometry.tetmesh import boundary_faces, compact_unreferenced
from core.locomotion.creatures import blob

START, END = 1, 16  # 15 frames at 15 fps with 2 sub-steps: 30 solver steps of 1/30 s, the recipe's step


def blob_object(bpy, tmp_path, name="Slug"):
    """The blob's surface (cells of 0.12 m: about 200 vertices) as a mesh object with small, fast settings."""
    mesh = blob(cell=0.12)
    V, F, _ = compact_unreferenced(mesh.X, boundary_faces(mesh.T))
    data = bpy.data.meshes.new(name)
    data.from_pydata(V.tolist(), [], F.tolist())
    data.update()
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 15, 1.0
    s = obj.skinmodes
    s.cache_dir = str(tmp_path / "cache") + "/"
    s.target_tets, s.modes, s.clusters, s.substeps = 3000, 8, 30, 2
    s.use_scene_range = False
    s.frame_start, s.frame_end = START, END
    s.gait_generations = 1
    return obj


@pytest.fixture
def slug(addon, tmp_path):
    import bpy

    return blob_object(bpy, tmp_path)
