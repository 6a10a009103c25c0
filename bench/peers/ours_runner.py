"""skinmodes as one side of a paired measurement (run in the main environment by ``worker.py``).

The same three jobs as the peers' sides (see ``worker.py`` for the protocol):

* ``prepare``: raw arrays (vertices, tets, rig weights) and a material to a
  ready simulator, all inside the timer: tet-mesh set-up, leak field,
  skinning modes, clusters, reduced products, Simulator construction;
* ``load``: a simulator on given modes and clusters (untimed), so that every
  side steps the very same model;
* ``steps``: advance the simulation, rig parameters going round one period
  of the animation (fixed iterations, no early exit).
"""

from __future__ import annotations

import time

import numpy as np

from core.dynamics.simulator import SimulationSettings, Simulator
from core.geometry.tetmesh import TetMesh
from core.model.fem import lumped_mass
from core.model.leak import default_leak_field
from core.model.materials import Material
from core.model.rig import LBSRig
from core.subspace.reduced import assemble_model, build_reduced_model


def settings(h: float, iters: int, tolerance: float = 0.0) -> SimulationSettings:
    # The peers implement the paper's energy (ARAP, relative to the elastic rest shape) with a fixed
    # iteration count; tolerance 0 never stops early (the converged pairing passes our default).
    return SimulationSettings(
        time_step=h, max_iterations=iters, tolerance=tolerance, material="arap", rest_state="rest"
    )


class Side:
    name = "skinmodes"

    def __init__(self) -> None:
        self.sim: Simulator | None = None
        self.P = np.zeros((1, 0))
        self.state = None
        self.k = 0

    def prepare(self, d: dict, m: int, r: int) -> dict:
        """Raw arrays to a ready simulator; returns seconds and the model's real m and r."""
        t0 = time.perf_counter()
        mesh = TetMesh.from_arrays(d["X"], d["T"])
        mat = Material.uniform(mesh.t, float(d["E"]), 0.0, float(d["rho"]))
        model = build_reduced_model(mesh, mat, LBSRig.from_weights(d["Wrig"]), m=m, r=r)
        sim = Simulator(model, settings(float(d["h"]), int(d["iters"])))
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "m": model.m, "r": model.r, "breakdown_s": {**model.timings}, "_keep": sim}

    def load(self, d: dict) -> dict:
        mesh = TetMesh.from_arrays(d["X"], d["T"])
        mat = Material.uniform(mesh.t, float(d["E"]), 0.0, float(d["rho"]))
        masses = lumped_mass(mesh, mat.density)
        rig = LBSRig.from_weights(d["Wrig"])
        model = assemble_model(mesh, mat, masses, default_leak_field(mesh), rig, d["W"], d["lam"], d["labels"])
        self.sim = Simulator(model, settings(float(d["h"]), int(d["iters"]), float(d.get("tolerance", 0.0))))
        self.P = np.asarray(d["P"])
        self.reset()
        return {"m": model.m, "r": model.r}

    def reset(self) -> None:
        """Back to the first frame, the rig already moving (its previous pose is the period's last)."""
        assert self.sim is not None
        self.state = self.sim.initial_state(self.P[0], p_prev=self.P[-1])
        self.k = 0
        self.last_iterations = 0

    def steps(self, count: int) -> float:
        """Seconds for ``count`` steps, continuing from the current state."""
        sim, P, L = self.sim, self.P, len(self.P)
        assert sim is not None
        state, k = self.state, self.k
        t0 = time.perf_counter()
        report = None
        for _ in range(count):
            k += 1
            state, report = sim.step(state, P[k % L])
        seconds = time.perf_counter() - t0
        self.state, self.k = state, k
        self.last_iterations = 0 if report is None else int(report.iterations)  # the last step's
        return seconds

    def displacement(self) -> np.ndarray:
        """Secondary displacement (n, 3) of the tet vertices in the current state."""
        assert self.sim is not None
        return self.sim.displacement(self.state)
