"""The README's physics-skin picture: a cylinder twisted 180° at a two-bone joint, LBS beside physics skin.

    .venvs/main/bin/python tools/physskin_picture.py [--out docs/physics_skin_twist.png]

The limb of the benchmark's physics-skinning section (``bench/physskin.py``): a
4 x 1 bar of 32 x 8 x 8 cubes (cells_per_unit 8; 2,673 vertices, 12,288 tets)
with its section mapped onto a disk of radius 0.5, two bones meeting at x = 2,
hat weights blending over x in [1, 3].  Bone 1 is turned 180° about the axis.
Left: linear blend skinning (the candy wrapper).  Right: physics skinning with
blended per-tet rotations, Poisson's ratio 0.45, built by the pipeline's
``PhysicsRig``.  The boundary surface is drawn with stripes painted by the rest
angle around the axis (so the twist shows) and the same camera on both sides;
each title gives the total signed volume change and the inverted tets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.physskin import JOINTS, POISSON, build_rig, cylinder_mesh, limb_pose  # noqa: E402
from core.geometry.tetmesh import boundary_faces, signed_volumes  # noqa: E402
from core.model.rig import lbs_positions  # noqa: E402
from core.physskin.rotations import blended_rotations  # noqa: E402
from core.validation.scenes import chain_weights  # noqa: E402

OUT = ROOT / "docs" / "physics_skin_twist.png"
CELLS = (32, 8)  # cells_per_unit 8 on the 4 x 1 bar
STRIPES = 8  # sectors of the rest angle around the axis, alternately light and dark
LIGHT = np.array([0.35, -0.55, 0.75]) / np.linalg.norm([0.35, -0.55, 0.75])


def _face_colours(X: np.ndarray, x: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """RGBA (f, 4): stripes by the rest angle around the axis (caps plain), Lambert-shaded in the pose x."""
    c = X[faces].mean(axis=1)
    sector = np.floor((np.arctan2(c[:, 2], c[:, 1]) + np.pi) / (2 * np.pi) * STRIPES).astype(int) % 2
    cap = (c[:, 0] < 1e-9) | (c[:, 0] > X[:, 0].max() - 1e-9)
    base = np.where(sector[:, None] == 0, [0.93, 0.62, 0.30], [0.30, 0.50, 0.78])
    base[cap] = [0.75, 0.75, 0.75]
    p = x[faces]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    shade = 0.35 + 0.65 * np.abs(n @ LIGHT)  # both sides lit: a collapsed wrapper shows its inside faces too
    return np.c_[np.clip(base * shade[:, None], 0.0, 1.0), np.ones(len(faces))]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    mesh = cylinder_mesh(*CELLS)
    A = limb_pose(0.0, 180.0)
    W = chain_weights(mesh.X, JOINTS)
    rig = build_rig(mesh, POISSON)
    poses = {
        "Linear blend skinning": lbs_positions(mesh.X, W, A),
        f"Physics skin (blended rotations, ν = {POISSON:g})": rig.skin.positions(
            A, blended_rotations(A, rig.tet_weights)
        ),
    }
    faces = boundary_faces(mesh.T)
    V0 = float(mesh.volumes.sum())
    fig = plt.figure(figsize=(10.0, 3.9))
    lo = np.min([x.min(axis=0) for x in poses.values()], axis=0)
    hi = np.max([x.max(axis=0) for x in poses.values()], axis=0)
    for i, (title, x) in enumerate(poses.items()):
        v = signed_volumes(x, mesh.T)
        ax = fig.add_subplot(1, 2, i + 1, projection="3d")
        ax.add_collection3d(Poly3DCollection(x[faces], facecolors=_face_colours(mesh.X, x, faces), linewidths=0))
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_zlim(lo[2], hi[2])
        ax.set_box_aspect(hi - lo)
        ax.view_init(elev=18, azim=-62)
        ax.set_axis_off()
        ax.set_title(
            f"{title}\nvolume {100 * (v.sum() / V0 - 1):+.1f} %, {int((v <= 0).sum())} inverted tets", fontsize=10
        )
        print(f"{title}: volume change {100 * (v.sum() / V0 - 1):+.2f} %, inverted tets {int((v <= 0).sum())}")
    fig.suptitle(
        f"A cylinder ({mesh.n:,} vertices, {mesh.t:,} tets) twisted 180° at a two-bone joint", fontsize=11, y=0.98
    )
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.0, top=0.86, wspace=0.0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
