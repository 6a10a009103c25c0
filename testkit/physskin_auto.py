"""Physics Skin From Bones Only against Blender's Automatic Weights on a real character's bent elbow (issue 30).

CesiumMan's elbow bent as in :func:`testkit.real_characters.elbow_volumes`; the mesh re-weighted by
Blender's own Automatic Weights (bone heat, Object > Parent > With Automatic Weights), then the
add-on's session builds the tet mesh and the rig of the frame.  On the same tets: linear blend
skinning with the automatic weights (what a user gets from one click in Blender) against the
physics skin from bones only (no weights used), and the character's painted weights' linear blend
and shipped physics skin beside them.  Regions by the bone-distance weights of the from-bones
skin: the bent limb (upper and lower bones together above a half) and the joint (both above 5 %).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import numpy as np

from testkit import real_characters as rc
from testkit.build_extension import ADDON_MODULE


def automatic_weights(bpy: Any, loaded: rc.Loaded) -> None:
    """Replace the mesh's vertex groups by Blender's Automatic Weights (bone heat) from its armature."""
    obj, arm = loaded.obj, loaded.armature
    for group in list(obj.vertex_groups):
        obj.vertex_groups.remove(group)
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    arm.select_set(True)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.parent_set(type="ARMATURE_AUTO", keep_transform=True)
    # parent_set adds an Armature modifier of its own when the mesh has one already: keep one
    mods = [m for m in obj.modifiers if m.type == "ARMATURE"]
    for extra in mods[1:]:
        obj.modifiers.remove(extra)


def _measure(bpy: Any, loaded: rc.Loaded, elbow: rc.ElbowSpec, from_bones: bool) -> tuple[Any, Any, np.ndarray]:
    api = importlib.import_module(ADDON_MODULE + ".api")
    session_mod = importlib.import_module(ADDON_MODULE + ".session")
    api.configure(loaded.obj, physics_skin=True, secondary_motion=False)
    loaded.obj.skinmodes.physics_skin_from = "BONES" if from_bones else "WEIGHTS"
    session = session_mod.build_session(loaded.obj, bpy.context.scene)
    session.record(loaded.start, bpy.context.evaluated_depsgraph_get())
    p = session.rig[loaded.start]
    s = api.settings(loaded.obj)
    rig = session.prepared.physics_rig(float(s.pin_depth), bool(s.pin_rigid), from_bones)
    return session, rig, p


def compare(bpy: Any, elbow: rc.ElbowSpec, work: Path) -> dict[str, Any]:
    """% volume change and inverted tets of the limb and the joint: painted LBS and physics, automatic
    weights' LBS, physics from bones only (Blender's weights unused), each on its own session's tets."""
    volumes = importlib.import_module(ADDON_MODULE + ".core.geometry.tetmesh").signed_volumes
    loaded = rc.load(bpy, rc.spec(elbow.character))
    rc.bend_elbow(bpy, loaded, elbow)
    work.mkdir(parents=True, exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(work / "auto_elbow.blend"))
    out: dict[str, Any] = {}
    runs = {}
    _, painted, p0 = _measure(bpy, loaded, elbow, from_bones=False)
    runs["painted"] = (painted, p0)
    automatic_weights(bpy, loaded)
    session, auto, p1 = _measure(bpy, loaded, elbow, from_bones=True)
    runs["automatic"] = (auto, p1)
    bones = list(session.binding.bones)
    for name, (rig, p) in runs.items():
        Wt = auto.tet_weights if name == "automatic" else rig.tet_weights
        w_up, w_low = Wt[:, bones.index(elbow.upper)], Wt[:, bones.index(elbow.lower)]
        regions = {"limb": w_up + w_low > 0.5, "joint": (w_up > 0.05) & (w_low > 0.05)}
        T, V0 = rig.mesh.T, rig.mesh.volumes
        methods = {"lbs": rig.lbs(p), "physics": rig.positions(p)}
        for method, x in methods.items():
            v = volumes(x, T)
            for region, m in regions.items():
                key = f"{name}_{method}_{region}"
                out[key + "_pct"] = float(100.0 * (v[m].sum() / V0[m].sum() - 1.0))
                out[key + "_inverted"] = int((v[m] <= 0).sum())
        out[f"{name}_pinned_share"] = len(rig.skin.pins) / rig.mesh.n
        out[f"{name}_tets"] = int(rig.mesh.t)
    return out
