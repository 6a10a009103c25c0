"""The locomotion drive: a found gait moves the whole character, behind :class:`core.dynamics.drive.Drive`.

:class:`core.pipeline.FrameSimulation` runs it like any other drive, so the bake,
the preview and the CLI need no branch for locomotion.  What drives the solver
at a frame (the *sample*) is the gait's clock: frames since the start, (1,);
sub-steps interpolate it linearly, and each step rounds it back to its whole
step count, so a step's actuation time is ``k dt`` exactly, the same float the
locomotion room's own rollout uses: the two give the same positions bit for bit.

The state is :class:`core.locomotion.step.State` (Z, Z_prev, ground forces), in
the *unconstrained* skinning subspace (rigid and affine motion free), not the
rig-complementary basis the jiggle uses; ``displacement`` is the whole motion of
the render vertices relative to rest (travel included), so a bake with an
identity rig stores the crawl in the point cache and leaves the object's
transform alone.  The solver's stiffness and damping controls do not apply:
the material and the gait set them.
"""

from __future__ import annotations

import numpy as np

from ..contact.ground import GroundPlane
from ..dynamics.simulator import StepReport
from ..errors import SimulationError
from ..geometry.embedding import Embedding
from ..geometry.size import character_size
from .gait import GaitProblem
from .model import LocomotionModel
from .signal import Sinusoids, actuation_at
from .step import State, Stepper, StepSettings, body_rotation, rest_state


def embedded_basis(Y: np.ndarray, T: np.ndarray, embedding: Embedding) -> np.ndarray:
    """The basis (k, q) at embedded points: barycentric blends of Y (n, q) over their tets T (t, 4)."""
    return np.einsum("kj,kjq->kq", embedding.bary, Y[T[embedding.tet]])


class LocomotionDrive:
    """Runs a gait (``sinusoids``) from rest on ``ground``; one solver step per sub-step.

    model, settings (dt must be 1 / (fps substeps) of the frame loop), ground, sinusoids;
    render: the basis (k, q) at the render vertices (:func:`embedded_basis`); probes: the
    basis (p, q) at the guard's probe points; substeps per frame; start: the frame the gait
    starts at (time 0).
    """

    jiggles = True
    arap = True

    def __init__(
        self,
        model: LocomotionModel,
        settings: StepSettings,
        ground: GroundPlane,
        sinusoids: Sinusoids,
        render: np.ndarray,
        probes: np.ndarray,
        substeps: int,
        start: int,
    ) -> None:
        self.model, self.settings, self.sinusoids = model, settings, sinusoids
        self.stepper = Stepper(model, settings, ground)
        self.render, self.probes = render, probes
        self.substeps, self.start = int(substeps), int(start)
        self._probe_rest = probes @ model.rest
        self._com0 = model.centre_of_mass(model.rest)
        self._render_rest: np.ndarray | None = None  # the render vertices at rest, on first use
        self._size = character_size(model.positions(model.rest))

    @classmethod
    def from_problem(
        cls,
        problem: GaitProblem,
        sinusoids: Sinusoids,
        T: np.ndarray,
        embedding: Embedding,
        probe_ids: np.ndarray,
        fps: float,
        substeps: int,
        start: int,
    ) -> LocomotionDrive:
        """The drive of a gait problem's model for render vertices embedded in its tets T (t, 4).

        probe_ids: (p,) tet vertices the guard watches; fps and substeps: the frame loop's, which must
        give the problem's time step (a gait found at one dt is another gait at another).
        """
        dt = 1.0 / (fps * substeps)
        if not np.isclose(problem.settings.dt, dt, rtol=1e-12, atol=0.0):
            raise SimulationError(
                f"the gait was found with steps of {problem.settings.dt:g} s; {fps:g} fps with {substeps} "
                f"sub-step(s) gives {dt:g} s: choose a matching frame rate and sub-steps"
            )
        Y = problem.model.subspace.basis
        render = embedded_basis(Y, T, embedding)
        return cls(problem.model, problem.settings, problem.ground, sinusoids, render, Y[probe_ids], substeps, start)

    def body_transform(self, state: State) -> np.ndarray:
        """The body's best-fit rigid motion from rest (3, 4): [R | t] with x ~ R x_rest + t.

        For an add-on that puts the travel on the object's transform and the rest of the motion in the cache.
        """
        R = body_rotation(self.model, state.Z)
        return np.column_stack([R, self.model.centre_of_mass(state.Z) - R @ self._com0])

    @property
    def size(self) -> float:
        """The project's one size measure (``core.geometry.size``): the guard's shares mean what they do elsewhere."""
        return self._size

    def sample(self, frame: int) -> np.ndarray:
        return np.array([float(frame - self.start)])

    def initial_state(self, sample: np.ndarray, before: np.ndarray | None) -> State:
        return rest_state(self.model)  # a gait starts still, on the ground

    def restart(self, state: State, sample: np.ndarray) -> State:
        return State(state.Z, state.Z, state.forces)

    def step_count(self, sample: np.ndarray) -> int:
        """Whole solver steps since the start at an interpolated ``sample`` (exact: rounding absorbs round-off)."""
        return round(float(sample[0]) * self.substeps)

    def step(
        self, state: State, sample: np.ndarray, frame: float, stiffness_scale: float, damping: float
    ) -> tuple[State, StepReport]:
        abar = actuation_at(self.step_count(sample), self.settings.dt, self.sinusoids)
        state, rep = self.stepper.step(state, abar)
        return state, StepReport(rep.iterations, rep.residual, float("nan"), converged=rep.converged)

    def probe_displacement(self, state: State, frame: int) -> np.ndarray:
        """The probes' deformation (p, 3): their motion less the body's best-fit rigid motion (travel is no offset)."""
        R = body_rotation(self.model, state.Z)
        rigid = (self._probe_rest - self._com0) @ R.T + self.model.centre_of_mass(state.Z)
        return self.probes @ state.Z - rigid

    def displacement(self, state: State, frame: int) -> np.ndarray:
        """The render vertices' whole motion (k, 3) relative to rest."""
        return self.render @ (state.Z - self.model.rest)

    def offset(self, state: State, frame: int, displacement: np.ndarray) -> np.ndarray:
        """The render vertices' deformation (k, 3): their motion less the body's best-fit rigid motion."""
        R = body_rotation(self.model, state.Z)
        if self._render_rest is None:
            self._render_rest = self.render @ self.model.rest
        rigid = (self._render_rest - self._com0) @ R.T + self.model.centre_of_mass(state.Z)
        return displacement - (rigid - self._render_rest).astype(displacement.dtype)

    def skin_correction(self, frame: int) -> np.ndarray | None:
        return None

    def forget_after(self, frame: int) -> None:
        pass  # nothing cached: the gait is read as asked

    def notes(self) -> list[tuple[str, list[int]]]:
        return []  # nothing this drive solves per frame stops short
