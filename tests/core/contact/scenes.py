"""Small contact scenes for the contact and safety tests: a bar (a tail) on a bone chain, box colliders."""

import numpy as np

from core.contact.colliders import MeshCollider
from core.contact.surface import SurfaceContact
from core.dynamics.simulator import SimulationSettings, Simulator
from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import boundary_faces
from core.model.materials import Material
from core.model.rig import rig_parameters
from core.subspace.reduced import build_reduced_model
from core.validation.scenes import bar_scene

H = 1.0 / 48.0
WIDTH = 0.4  # the bar's thickness (m): 2 m long, 0.4 m x 0.4 m, centred on the x axis


def bar(poisson=0.0, stiffness=2e4):
    """(scene, reduced model) of the 2 m bar with three bones."""
    scene = bar_scene(length=2.0, width=WIDTH, cells_per_unit=4, bones=3)
    mat = Material.uniform(scene.mesh.t, stiffness, poisson, 1000.0)
    return scene, build_reduced_model(scene.mesh, mat, scene.rig, m=8, r=40)


def box(lo, hi):
    """A closed box collider between corners lo and hi (3,), outward-wound."""
    lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    X, T = box_tet_mesh((1, 1, 1), tuple(hi - lo), tuple(lo))
    return MeshCollider(X, boundary_faces(T))


def simulator(model, contact=True, **settings):
    s = SimulationSettings(time_step=H, **settings)
    return Simulator(model, s, SurfaceContact(model, H) if contact else None)


def translated(dz, bones=3):
    """LBS parameters of the rig moved by (0, 0, dz)."""
    A = np.tile(np.eye(4)[:3], (bones, 1, 1))
    A[:, 2, 3] = dz
    return rig_parameters(A)


def roll(sim, scene, pose, obstacles, steps, **kw):
    """Run ``steps`` steps; pose(t) -> p (12 b,), obstacles(t) -> list.  Returns (positions, rig positions) lists."""
    state = sim.initial_state(pose(0.0))
    xs, rigs = [], []
    for k in range(1, steps + 1):
        t = k * H
        state, _ = sim.step(state, pose(t), obstacles=obstacles(t), **kw)
        x_rig = _lbs(scene, pose(t))
        xs.append(x_rig + sim.displacement(state))
        rigs.append(x_rig)
    return xs, rigs


def _lbs(scene, p):
    from core.model.rig import lbs_basis, rig_matrix

    return lbs_basis(scene.rig.weights, scene.mesh.X) @ rig_matrix(p)


def signed_depth(collider, x):
    """How far (n,) each point x (n, 3) lies inside ``collider`` (m; negative outside, -inf far away)."""
    planes = collider.planes(x, margin=1e9)
    out = np.full(len(x), -np.inf)
    np.maximum.at(out, planes.index, planes.depth(x))
    return out


def excess_depth(collider, x, x_rig):
    """How far (m) the flesh x (n, 3) lies inside ``collider`` beyond where the rig x_rig (n, 3) puts it, at most."""
    return float(np.max(signed_depth(collider, x) - np.maximum(signed_depth(collider, x_rig), 0.0)))
