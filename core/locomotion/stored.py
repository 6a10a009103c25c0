"""A gait as plain data: the search vector x, the settings it was found for, and the key of its tet mesh.

What a user's object keeps (the add-on saves it with the .blend as JSON text) and what
:func:`core.pipeline.drives.locomotion_drive` replays.  Replaying needs the same locomotion model,
so the settings hold everything the model and the problem are built from (material, modes, contact,
time step, direction, period range) beside the search budget it was found with; the mesh key
(:func:`mesh_key`) says which tet mesh: a gait found on another mesh is another gait, and is refused
in one line (:meth:`StoredGait.check_mesh`) rather than played as a twitch.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np

from ..contact.ground import GroundPlane
from ..errors import SimulationError, SkinmodesError
from ..geometry.tetmesh import TetMesh
from ..geometry.tetrahedralize import MIN_TETS
from ..model.materials import Material
from .coarse import COARSE_TETS, coarse_copy, is_large, search_coarse
from .creatures import RECIPES
from .gait import Gait, GaitProblem, Progress, find_gait, ground_under, rollout
from .model import build_locomotion_model
from .step import StepSettings
from .transfer import PairingError

# The JSON's "format": raised when the stored layout changes, so an old .blend's gait is refused by name.
GAIT_FORMAT = 1


_BLOB = RECIPES["blob"]


@dataclass(frozen=True)
class GaitSettings:
    """Everything a gait is found for and replayed with, beside its mesh.

    direction (3,): unit travel direction in the tet mesh's frame, in the ground plane (z up);
    period_min, period_max (s): the sinusoids' period range; actuation_modes m and skinning_modes s;
    amplitude_max (modes' radii); youngs (Pa), poisson, density (kg/m^3), friction (Coulomb): the gait's
    own material (the creatures' recipe by default); dt (s): the solver step, 1 / (fps sub-steps) of the
    frame loop that plays it; rollout_s, judge_s (s): the search's rollout and its judge's (0: no judge);
    generations, population, restarts, sigma0, seed: the CMA-ES budget (they do not change the replay);
    coarse_tets: a mesh of more than ``coarse.LARGE_FACTOR`` x this many tets is searched on a coarse copy of
    its shape this size and the gait carried back and refined (``coarse.py``); 0 searches the mesh itself.
    """

    direction: tuple[float, float, float] = (1.0, 0.0, 0.0)
    period_min: float = 0.3
    period_max: float = 1.5
    actuation_modes: int = 6
    skinning_modes: int = 5
    # The blob's recipe (creatures.RECIPES), so the tested creatures and a user's mesh share one default.
    amplitude_max: float = _BLOB.amplitude_max
    youngs: float = _BLOB.youngs
    poisson: float = _BLOB.poisson
    density: float = _BLOB.density
    friction: float = _BLOB.friction
    dt: float = _BLOB.dt
    rollout_s: float = _BLOB.steps * _BLOB.dt
    judge_s: float = _BLOB.judge_steps * _BLOB.dt
    generations: int = _BLOB.generations
    population: int = _BLOB.population
    restarts: int = _BLOB.restarts
    sigma0: float = _BLOB.sigma0
    seed: int = 0
    coarse_tets: int = COARSE_TETS

    def steps(self, seconds: float) -> int:
        """Solver steps in ``seconds`` (at least one)."""
        return max(1, round(seconds / self.dt))

    @property
    def judge_steps(self) -> int | None:
        return self.steps(self.judge_s) if self.judge_s > 0 else None


def mesh_key(mesh: TetMesh) -> str:
    """A hash of the tet mesh's vertices (n, 3) and tets (t, 4) as float64 and int64: which mesh a gait is for."""
    h = hashlib.sha1(np.ascontiguousarray(mesh.X, dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(mesh.T, dtype=np.int64).tobytes())
    return h.hexdigest()


def gait_problem(mesh: TetMesh, settings: GaitSettings, steps: int) -> GaitProblem:
    """The gait problem of a tet mesh: every boundary vertex a contact sample, 5 passive clusters, one actuation
    cluster, actuation stiffness 2 mu (as ``creatures.creature_problem``), the ground under the rest shape (z up)."""
    mat = Material.uniform(mesh.t, settings.youngs, settings.poisson, settings.density)
    model = build_locomotion_model(
        mesh,
        mat,
        s=settings.skinning_modes,
        m=settings.actuation_modes,
        passive_clusters=5,
        actuation_clusters=1,
        samples=mesh.n,
        actuation_stiffness=2.0,
    )
    under = ground_under(model)
    return GaitProblem(
        model,
        StepSettings(dt=settings.dt, tolerance=1e-4),
        GroundPlane(under.normal, under.height, settings.friction),
        np.asarray(settings.direction, dtype=np.float64),
        steps=steps,
        amplitude_max=settings.amplitude_max,
        period_range=(settings.period_min, settings.period_max),
    )


@dataclass(frozen=True, eq=False)  # holds an array
class StoredGait:
    """A found gait: x (3 m k,) the search vector, its settings, the key of the tet mesh it was found on, and
    the search's figures (objective J over the search rollout, judged J over the judge's, rollouts, seconds)."""

    x: np.ndarray
    settings: GaitSettings
    mesh_key: str
    objective: float
    judged: float | None
    evaluations: int
    seconds: float
    # What a 10 s replay measured (:func:`measure`): body lengths per 10 s, heading off the direction, ...;
    # empty until measured.  Kept with the gait so the panel shows what was found after a reload.
    figures: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> str:
        """Plain JSON (x as a list of floats: Python's repr of a float reads back bit for bit)."""
        data = {
            "format": GAIT_FORMAT,
            "x": [float(v) for v in self.x],
            "settings": asdict(self.settings),
            "mesh_key": self.mesh_key,
            "objective": self.objective,
            "judged": self.judged,
            "evaluations": self.evaluations,
            "seconds": self.seconds,
            "figures": {k: float(v) for k, v in self.figures.items()},
        }
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> StoredGait:
        """The gait ``to_json`` wrote; :class:`SkinmodesError` in one line for text that is not one."""
        try:
            data = json.loads(text)
            if data.get("format") != GAIT_FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {GAIT_FORMAT}")
            names = {f.name for f in fields(GaitSettings)}
            raw = {k: v for k, v in data["settings"].items() if k in names}
            raw["direction"] = tuple(float(v) for v in raw.get("direction", (1.0, 0.0, 0.0)))
            x = np.array(data["x"], dtype=np.float64)
            gait = cls(
                x=x,
                settings=GaitSettings(**raw),
                mesh_key=str(data["mesh_key"]),
                objective=float(data["objective"]),
                judged=None if data.get("judged") is None else float(data["judged"]),
                evaluations=int(data["evaluations"]),
                seconds=float(data["seconds"]),
                figures={str(k): float(v) for k, v in data.get("figures", {}).items()},
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SkinmodesError(f"the stored gait cannot be read ({exc}); run Find Gait again") from exc
        if x.ndim != 1 or not np.isfinite(x).all():
            raise SkinmodesError("the stored gait's parameters are not finite numbers; run Find Gait again")
        return gait

    def check_mesh(self, mesh: TetMesh, name: str = "the character") -> None:
        """Refuse, in one line, a gait found on another tet mesh (the mesh or its tet settings changed)."""
        if mesh_key(mesh) != self.mesh_key:
            raise SimulationError(
                f"the gait of {name} was found on another mesh (its shape or tet settings changed since); "
                "run Find Gait again"
            )

    def problem(self, mesh: TetMesh, steps: int | None = None) -> GaitProblem:
        """The problem the gait was found for, on its mesh (checked); ``steps`` per rollout (default: the search's)."""
        self.check_mesh(mesh)
        s = self.settings
        return gait_problem(mesh, s, s.steps(s.rollout_s) if steps is None else steps)


def search(mesh: TetMesh, settings: GaitSettings, progress: Progress | None = None) -> StoredGait:
    """Find a gait for a tet mesh with the settings' budget (``gait.find_gait``); same seed, same gait.

    A large mesh (``coarse.is_large``) is searched on a coarse copy of its shape and the gait carried back
    and refined (``coarse.search_coarse``).  A copy whose modes do not pair with the mesh's (a symmetric
    shape's repeated frequencies, thin arms lost at that resolution; checked before any rollout) gives way
    to one twice as fine, and once no copy is coarse enough to be worth it, the mesh itself is searched:
    the Search Copy is a speed-up, never a refusal (issue 40).
    """
    problem = gait_problem(mesh, settings, settings.steps(settings.rollout_s))
    start = time.perf_counter()
    budget = (settings.generations, settings.population, settings.seed, settings.sigma0, settings.restarts)
    if 0 < settings.coarse_tets < MIN_TETS:
        raise SimulationError(
            f"a Search Copy (gait_search_tets) of {settings.coarse_tets} tets cannot hold a shape; use at least "
            f"{MIN_TETS}, or 0 (search the mesh itself)"
        )
    gait: Gait | None = None
    tets, tried = settings.coarse_tets, False
    while gait is None and is_large(mesh, tets):
        small, tried = coarse_copy(mesh, tets), True
        try:
            found = search_coarse(
                problem, mesh, gait_problem(small, settings, problem.steps), small, *budget, settings.judge_steps,
                progress=progress,
            )  # fmt: skip
        except PairingError:  # checked before any rollout: only the copy and its modes were spent
            tets *= 2
            continue
        gait = replace(found.gait, seconds=time.perf_counter() - start)  # the copies and their models included
    if gait is None:
        gait = find_gait(problem, *budget, settings.judge_steps, progress=progress)
        if tried:  # the copies that could not carry it are part of the search's time
            gait = replace(gait, seconds=time.perf_counter() - start)
    return StoredGait(gait.x, settings, mesh_key(mesh), gait.objective, gait.judged, gait.evaluations, gait.seconds)


def measure(gait: StoredGait, mesh: TetMesh, seconds: float = 10.0) -> dict[str, float]:
    """Replay a gait for ``seconds`` and measure its travel: body_lengths per 10 s along the direction,
    distance_per_cycle (in body lengths, at the gait's amplitude-weighted mean period) and its objective J."""
    problem = gait.problem(mesh, gait.settings.steps(seconds))
    s = problem.sinusoids(gait.x)
    r = rollout(problem, s)
    travel = r.com[-1] - r.com[0]
    along = float(travel @ problem.direction) / problem.length
    simulated = problem.steps * gait.settings.dt
    period = float(np.average(s.period, weights=np.abs(s.amplitude) + 1e-300))
    finite = math.isfinite(r.objective)
    return {
        "body_lengths_per_10s": along * 10.0 / simulated,
        "distance_per_cycle": along * period / simulated,
        "heading_deg": heading(travel, np.asarray(problem.direction), np.asarray(problem.ground.normal)),
        "objective": r.objective if finite else float("nan"),
        "body_length": problem.length,
    }


def heading(travel: np.ndarray, direction: np.ndarray, up: np.ndarray) -> float:
    """Degrees between the travel (3,) on the ground (its part along ``up`` left out) and ``direction`` (3,):
    0 straight on, 180 backwards; 180 for no travel at all."""
    up = up / np.linalg.norm(up)
    flat = travel - (travel @ up) * up
    norm = float(np.linalg.norm(flat) * np.linalg.norm(direction))
    if norm <= 0.0:
        return 180.0
    return float(np.degrees(np.arccos(np.clip(float(flat @ direction) / norm, -1.0, 1.0))))
