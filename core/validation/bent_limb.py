"""A limb held bent away from its rest pose and shaken: reduced solvers against the full-space
reference on that pose (the accuracy figure of issue 16, pose-space subspaces).

The rig bends a bar's chain of bones by ``bend_deg`` in total (shared by its joints) and
then shakes the whole bent limb sideways, 0.3 length units at 2 Hz, from rest.  The
full-space reference (every tet its own rotation, exact complementarity) and two
reduced solvers with every tet its own cluster (so only the subspace is compared)
run the same steps: the rest pose's skinning eigenmodes alone, and pose-space modes
blended from the rest pose and the bent pose itself, whose modes are those of the
bent shape's own Hessian (the seed's reading, ``hessian="pose"``).  The error of a step is
||u - u_ref|| / ||u_ref|| over the tet vertices.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..dynamics.simulator import SimulationSettings, Simulator
from ..errors import MeshError
from ..model.fem import lumped_mass
from ..model.leak import default_leak_field
from ..model.materials import Material
from ..model.rig import lbs_positions, rig_parameters
from ..posespace.model import build_pose_space
from ..posespace.simulator import PoseSpaceSimulator
from ..subspace.reduced import build_reduced_model
from .reference import FullSpaceReference
from .scenes import BarScene, bar_scene

H = 1.0 / 48.0
SHAKE = 0.3  # length units, sideways (y)
SHAKE_HZ = 2.0


@dataclass(frozen=True)
class BentLimb:
    """bones along a bar of ``length`` (width 1), ``cells`` tets cells per unit, bent ``bend_deg`` in total."""

    name: str
    bones: int
    length: float
    cells: int
    bend_deg: float
    poisson: float = 0.0
    steps: int = 12

    def scene(self) -> BarScene:
        return bar_scene(length=self.length, cells_per_unit=self.cells, bones=self.bones)

    def transforms(self, scene: BarScene, t: float) -> np.ndarray:
        """Bone maps (b, 3, 4) at time t (s): the bend, shaken sideways after t = 0."""
        A = scene.transforms(0.25, amplitude=np.radians(self.bend_deg), frequency=1.0)  # the bend's peak
        if t > 0:
            A[:, 1, 3] += SHAKE * np.sin(2.0 * np.pi * SHAKE_HZ * t)
        return A


def limb_errors(limb: BentLimb, m: int) -> dict:
    """Per-step relative errors (steps,) of the rest-only and pose-space solvers against the reference.

    Returns {"rest": [...], "posespace": [...] or None, "refused": the reason when the bent pose
    cannot carry modes (its LBS shape inverts tets), "max_u": largest reference displacement,
    "seconds": {"reference", "rest", "posespace"}}.
    """
    scene = limb.scene()
    mesh = scene.mesh
    material = Material.uniform(mesh.t, 3e4, limb.poisson, 1000.0)
    masses = lumped_mass(mesh, material.density)
    leak = default_leak_field(mesh)
    times = [k * H for k in range(-1, limb.steps + 1)]
    A = [limb.transforms(scene, t) for t in times]
    P = [rig_parameters(a) for a in A]
    x = [lbs_positions(mesh.X, scene.rig.weights, a) for a in A]
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    ref = FullSpaceReference(mesh, material, scene.rig, masses, leak, H, rest_state="pose")
    u, u_prev, us = np.zeros_like(mesh.X), np.zeros_like(mesh.X), []
    for k in range(1, limb.steps + 1):
        new, _ = ref.step(u, u_prev, x[k + 1], x[k], x[k - 1])
        u_prev, u = u, new
        us.append(u)
    seconds["reference"] = time.perf_counter() - t0
    rest = build_reduced_model(mesh, material, scene.rig, m=m, r=mesh.t, leak=leak)
    settings = SimulationSettings(time_step=H, max_iterations=50, tolerance=1e-8)
    out: dict = {"max_u": float(np.abs(us).max()), "refused": None, "posespace": None}
    solvers: dict = {"rest": Simulator(rest, settings)}
    try:
        model = build_pose_space(rest, material, P[1][None], hessian="pose")  # the seed's reading
        solvers["posespace"] = PoseSpaceSimulator(model, settings)
    except MeshError as exc:
        out["refused"] = str(exc)
    for name, sim in solvers.items():  # loop over two solvers
        t0 = time.perf_counter()
        state = sim.initial_state(P[1], p_prev=P[0])
        errors = []
        for k in range(1, limb.steps + 1):
            state, _ = sim.step(state, P[k + 1])
            errors.append(float(np.linalg.norm(sim.displacement(state) - us[k - 1]) / np.linalg.norm(us[k - 1])))
        out[name] = errors
        seconds[name] = time.perf_counter() - t0
    out["seconds"] = seconds
    return out
