"""The README's physics-skin picture: a cylinder twisted 180° at a two-bone joint, LBS beside physics skin.

    .venvs/main/bin/python -m tools.physskin_picture [--out docs/physics_skin_twist.png]

The limb of the benchmark's physics-skinning section (``testkit/limb.py``): a
4 x 1 bar of 32 x 8 x 8 cubes (cells_per_unit 8; 2,673 vertices, 12,288 tets)
with its section mapped onto a disk of radius 0.5, two bones meeting at x = 2,
hat weights blending over x in [1, 3].  Bone 1 is turned 180° about the axis.
Left: linear blend skinning (the candy wrapper).  Right: physics skinning with
blended per-tet rotations, Poisson's ratio 0.45, built and run by the pipeline's
``PhysicsRig`` (the linear solve and its volume step).  The boundary surface is drawn with stripes painted by the rest
angle around the axis (so the twist shows), seen by the same orthographic camera on both sides
(faces drawn farthest first);
each title gives the total signed volume change and the inverted tets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from core.geometry.tetmesh import boundary_faces, signed_volumes
from core.model.rig import lbs_positions
from core.validation.scenes import chain_weights
from testkit.limb import JOINTS, POISSON, build_rig, cylinder_mesh, limb_pose

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "physics_skin_twist.png"
CELLS = (32, 8)  # cells_per_unit 8 on the 4 x 1 bar
STRIPES = 8  # sectors of the rest angle around the axis, alternately light and dark
ELEVATION, YAW = np.radians(20.0), np.radians(-25.0)  # the camera: above the limb and a little to its front
LIGHT = np.array([0.3, -0.6, 0.75]) / np.linalg.norm([0.3, -0.6, 0.75])  # in the camera's frame (u, depth, v)


def camera() -> np.ndarray:
    """World -> camera (3, 3): rows are screen right u, depth (away from the viewer) and screen up v."""
    ce, se, ca, sa = np.cos(ELEVATION), np.sin(ELEVATION), np.cos(YAW), np.sin(YAW)
    yaw = np.array([[ca, -sa, 0.0], [sa, ca, 0.0], [0.0, 0.0, 1.0]])
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, ce, -se], [0.0, se, ce]])
    return tilt @ yaw


def _face_colours(X: np.ndarray, p: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """RGB (f, 3): stripes by the rest angle around the axis (caps plain), Lambert-shaded; p: camera-frame positions."""
    c = X[faces].mean(axis=1)
    sector = np.floor((np.arctan2(c[:, 2], c[:, 1]) + np.pi) / (2 * np.pi) * STRIPES).astype(int) % 2
    cap = (c[:, 0] < 1e-9) | (c[:, 0] > X[:, 0].max() - 1e-9)
    base = np.where(sector[:, None] == 0, [0.93, 0.62, 0.30], [0.30, 0.50, 0.78])
    base[cap] = [0.75, 0.75, 0.75]
    q = p[faces]
    n = np.cross(q[:, 1] - q[:, 0], q[:, 2] - q[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    shade = 0.4 + 0.6 * np.abs(n @ LIGHT)  # both sides lit: a collapsed wrapper shows its inside faces too
    return np.clip(base * shade[:, None], 0.0, 1.0)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    mesh = cylinder_mesh(*CELLS)
    A = limb_pose(0.0, 180.0)
    W = chain_weights(mesh.X, JOINTS)
    rig = build_rig(mesh, POISSON)
    poses = {
        "Linear blend skinning": lbs_positions(mesh.X, W, A),
        f"Physics skin (ν = {POISSON:g}, as the add-on runs it)": rig.positions(A.ravel()),
    }
    faces = boundary_faces(mesh.T)
    V0 = float(mesh.volumes.sum())
    C = camera()
    views = {k: x @ C.T for k, x in poses.items()}
    lo = np.min([p.min(axis=0) for p in views.values()], axis=0)
    hi = np.max([p.max(axis=0) for p in views.values()], axis=0)
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 3.0))
    for ax, (title, x) in zip(axes, poses.items()):
        p = views[title]
        order = np.argsort(-p[faces][:, :, 1].mean(axis=1))  # painter's algorithm: the farthest first
        polys = p[faces[order]][:, :, [0, 2]]
        ax.add_collection(PolyCollection(list(polys), facecolors=_face_colours(mesh.X, p, faces)[order], lw=0.0))
        ax.set_xlim(lo[0] - 0.05, hi[0] + 0.05)
        ax.set_ylim(lo[2] - 0.05, hi[2] + 0.05)
        ax.set_aspect("equal")
        ax.set_axis_off()
        v = signed_volumes(x, mesh.T)
        dv, inverted = 100 * (v.sum() / V0 - 1), int((v <= 0).sum())
        ax.set_title(f"{title}\nvolume {dv:+.1f} %, {inverted} inverted tets", fontsize=10)
        print(f"{title}: volume change {dv:+.2f} %, inverted tets {inverted}")
    fig.suptitle(f"A cylinder ({mesh.n:,} vertices, {mesh.t:,} tets) twisted 180° at a two-bone joint", fontsize=11)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
