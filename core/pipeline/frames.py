"""The frame loop: simulates a frame range with sub-steps, whatever drives it, any frame in any order.

The bake, the live preview and the CLI all go through :class:`FrameSimulation`,
which is why they agree frame for frame.  It owns the frames (sub-steps, the
cache of states, checkpoints, cuts, the guards, the solver statistics and the
stiffness controls); a :class:`core.dynamics.drive.Drive` owns the solver, so a
new way of driving the flesh plugs in without a change here.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..dynamics.drive import Drive, State
from ..dynamics.wobble import implicit_euler_controls, scaled_frequency
from ..errors import SimulationError
from ..model.rig import lbs_basis, rig_matrix
from .drives import character_drive
from .guards import OFFSET_WARNING, RigGuard, Warnings, frame_ranges, guard_probes, offset_share, offset_warning
from .prepare import PoseSpaceCharacter, PreparedCharacter, SolverSettings, physical_scale

RigFrames = Mapping[int, np.ndarray] | Callable[[int], np.ndarray]
# (wobble_hz, damping_ratio) of a frame, for animated controls.
ControlFrames = Callable[[int], tuple[float, float]]
# A character whose lowest point at the first frame is this share of its size below the Ground is said to start
# under it (a foot resting on it sits within round-off and the lattice's offset of the surface).
GROUND_SLACK = 0.05

# Every simulated frame's state is kept (scrubbing back replays it at once)
# until they take STATE_BUDGET bytes (a state is 4 x 12m floats: 6 KB at 16
# modes, so 256 MB is ~40k frames); beyond that only one state every
# CHECKPOINT frames (and the newest) is kept, and going back re-simulates at
# most CHECKPOINT - 1 frames: a 100k-frame bake stays bounded.
STATE_BUDGET = 256 * 2**20
CHECKPOINT = 24


def check_frame_range(start: int, end: int) -> tuple[int, int]:
    """(start, end) as ints, or a one-line :class:`SimulationError` when the range holds no frame.

    Both ends are simulated (end == start is one frame).  The bake, the
    session and :class:`FrameSimulation` all refuse through here, before any
    work, with the same words.
    """
    start, end = int(start), int(end)
    if end < start:
        raise SimulationError(f"the frame range {start} to {end} is empty; set the end frame after the start frame")
    return start, end


class FrameSimulation:
    """Simulates a frame range with sub-steps; any frame can be asked for, in any order.

    rig: the LBS rig parameters (12 b,) of the tet mesh for each integer frame
    (world transforms of each bone applied to object-space rest positions),
    as a mapping or a function; with pre-roll it is also asked for the
    ``solver.preroll`` frames before ``start``.  Sub-steps interpolate what
    drives the solver linearly between frames; the rig is never sampled
    between frames.  The state at the first simulated frame is at rest
    relative to what drives it, moving with its velocity there: its previous
    sample is extrapolated one *sub-step* back, the spacing of every solver step.
    controls: (wobble_hz, damping_ratio) per frame when they are animated
    (default: the solver settings' values).  drive: what moves the flesh
    (:class:`core.dynamics.drive.Drive`); by default the character's own
    (:func:`character_drive`: the rig, the training poses of ``posespace`` or
    the physics skin).
    """

    def __init__(
        self,
        prepared: PreparedCharacter,
        solver: SolverSettings,
        start: int,
        end: int,
        rig: RigFrames,
        controls: ControlFrames | None = None,
        column_names: Sequence[str] | None = None,
        posespace: PoseSpaceCharacter | None = None,
        drive: Drive[Any] | None = None,
    ):
        check_frame_range(start, end)
        if solver.preroll < 0:
            raise SimulationError(f"pre-roll {solver.preroll} must be zero or more frames")
        self.prepared = prepared
        self.solver = solver
        self.start, self.end = int(start), int(end)
        self._rig = rig
        self._controls = controls
        self._warnings = Warnings()  # ``warnings`` adds the solver's line
        own_drive = False  # the character's own drive (its rig), not one given (a gait, rotation-strain)
        if drive is None:
            # Keyed Wobble comes per frame (``controls``; the settings carry 0): the drive's fibers, which the
            # Wobble does not animate, are capped against the softest keyed value of the shot.
            softest = solver if controls is None else replace(solver, wobble_hz=min(
                controls(f)[0] for f in range(self.start - solver.preroll, self.end + 1)
            ))  # fmt: skip
            drive, notes = character_drive(prepared, softest, self.rig, posespace)
            own_drive = True
            for note in notes:
                self._warnings.once(note, note)
        self.drive = drive
        self.omega0 = prepared.slowest_frequency(drive.arap)
        model = prepared.model
        probes = guard_probes(model.X)
        probe_rig = None if model.rig_weights is None else lbs_basis(model.rig_weights[probes], model.X[probes])
        first = self.start - solver.preroll
        self.guard = RigGuard(
            self.rig, probe_rig, drive.size, first, self.end, solver.reset_at_cuts, self._warnings, column_names
        )
        if solver.ground and model.rig_weights is not None and own_drive:
            self._under_ground(first)
        self.max_offset = 0.0  # largest offset played so far (the render vertices'), as a share of the character's size
        # (frame, id of its state, its offsets, their secondary motion alone): see _played.
        self._last: tuple[int, int, np.ndarray, np.ndarray] | None = None
        a0 = drive.sample(first)
        a1 = drive.sample(first + 1) if self.end > first else a0
        state = drive.initial_state(a0, a0 - (a1 - a0) / solver.substeps)
        self._states: dict[int, State] = {first: state}
        self._state_bytes = 4 * state.z.nbytes  # z, z_prev, q, q_prev
        # Per simulated frame: each sub-step's solver iterations, and how many steps stopped unconverged.
        self.iterations: dict[int, tuple[int, ...]] = {}
        self.unconverged: dict[int, int] = {}
        if solver.preroll:
            state = self.state(self.start)
            self._states = {self.start: state}

    def _under_ground(self, first: int) -> None:
        """Say so when the Ground is above the character at the first simulated frame (issue 39, item 3): the
        flesh under it is pushed out from the first step, and the bake looks like a different one without a
        word (a ground at height 100 under a character at 0-1 did).  The rig's own tet positions, world Z."""
        m = self.prepared.model
        assert m.rig_weights is not None
        x = lbs_basis(m.rig_weights, m.X) @ rig_matrix(self.rig(first))  # (n, 3), metres
        unit = self.solver.world_unit
        height = unit * self.solver.ground_height
        depth = height - float(x[:, 2].min())
        if depth > GROUND_SLACK * self.drive.size:
            self._warnings.once(
                "under ground",
                f"frame {first}: the character starts {depth / unit:.3g} units under the Ground (its Height is "
                f"{self.solver.ground_height:g}); lower the Ground's Height to the character's feet, or move it up",
            )

    @property
    def size(self) -> float:
        """The character's size (m) the guard's shares are of."""
        return self.drive.size

    def rig(self, frame: int) -> np.ndarray:
        src = self._rig
        p = src(frame) if callable(src) else src[frame]
        return np.asarray(p, dtype=np.float64)

    def controls(self, frame: int) -> tuple[float, float]:
        """(stiffness scale kappa, damping c in 1/s) of the solver at ``frame``."""
        hz, zeta = (
            (self.solver.wobble_hz, self.solver.damping_ratio) if self._controls is None else self._controls(frame)
        )
        if self.solver.stiffness_mode == "physical":
            kappa = physical_scale(self.prepared, self.solver)
            return kappa, scaled_frequency(self.omega0, kappa, 2.0 * zeta)
        # Matched to the stepped motion: backward Euler's own damping and slowing are compensated.
        h = 1.0 / (self.solver.fps * self.solver.substeps)
        kappa, c, reached = implicit_euler_controls(self.omega0, hz, zeta, h)
        if reached - zeta > 0.05:  # 5 points of damping ratio
            self._warnings.once(
                "damping floor",
                f"frame {frame}: a damping ratio of {zeta:g} is below what {self.solver.substeps} sub-step(s) can "
                f"resolve at {hz:g} Hz; the wobble dies out at {reached:.2g} instead; add sub-steps",
            )
        return kappa, c

    @property
    def cached_frames(self) -> list[int]:
        return sorted(self._states)

    def state(self, frame: int) -> State:
        """The state at ``frame`` (clamped to the range), simulating forward as needed."""
        f = min(max(int(frame), self.start), self.end)
        if f in self._states:
            return self._states[f]
        if f - 1 in self._states:  # playing forward: the common case, O(1)
            k = f - 1
        else:
            frames = self.cached_frames
            k = frames[bisect.bisect_left(frames, f) - 1]  # the nearest simulated frame before f
        state = self._states[k]
        self.guard.prime(k)
        d_a = self.drive.sample(k)
        for g in range(k + 1, f + 1):
            d_b = self.drive.sample(g)
            if self.guard.check(g, self.rig(g)) and self.solver.reset_at_cuts:
                state = self.drive.restart(state, d_b)
            else:
                state = self._frame(g, state, d_a, d_b)
            self._states[g] = state
            self._forget_between_checkpoints(g - 1)
            d_a = d_b
        return state

    def _frame(self, g: int, state: State, d_a: np.ndarray, d_b: np.ndarray) -> State:
        """The state at frame ``g`` from the one at g - 1: sub-steps from sample d_a to d_b, then the guards."""
        S = self.solver.substeps
        kappa, c = self.controls(g)
        its, missed = [], 0
        for s in range(1, S + 1):
            a = s / S
            state, rep = self.drive.step(state, (1.0 - a) * d_a + a * d_b, g - 1 + a, kappa, c)
            its.append(rep.iterations)
            missed += not rep.converged
        self.iterations[g] = tuple(its)
        self.unconverged[g] = missed
        self._guard(g, state)
        self.guard.confirm_cuts(g)
        return state

    @property
    def warnings(self) -> list[str]:
        """What the bake and the panel say, one line each: the guard's, then the solver's (if any)."""
        line = self.convergence_warning()
        notes = [note.format(frames=frame_ranges(frames)) for note, frames in self.drive.notes() if frames]
        return self._warnings.lines + notes + ([line] if line else [])

    def solver_stats(self) -> dict[str, float | int | list[int]]:
        """Solver iterations per step over the simulated frames: mean, max, steps at the cap, unconverged frames."""
        its = [i for f in sorted(self.iterations) for i in self.iterations[f]]
        cap = self.solver.iterations
        return {
            "steps": len(its),
            "mean_iterations": round(float(np.mean(its)), 2) if its else 0.0,
            "max_iterations": max(its, default=0),
            "iteration_cap": cap,
            "steps_at_cap": sum(i >= cap for i in its),
            "unconverged_steps": sum(self.unconverged.values()),
            "unconverged_frames": sorted(f for f, n in self.unconverged.items() if n),
        }

    def convergence_warning(self) -> str:
        """One line naming the frames whose steps stopped at the iteration cap unconverged, or ""."""
        frames = sorted(f for f, n in self.unconverged.items() if n)
        if not frames:
            return ""
        steps = sum(self.unconverged.values())
        return (
            f"{steps} solver step{'s' if steps > 1 else ''} stopped unconverged at the cap of "
            f"{self.solver.iterations} iterations (frames {frame_ranges(frames)}); raise Iterations"
        )

    def _forget_between_checkpoints(self, frame: int) -> None:
        """Over the memory budget, drop the state of ``frame`` unless it is a checkpoint (or the start)."""
        if len(self._states) * self._state_bytes <= STATE_BUDGET:
            return
        if frame > self.start and (frame - self.start) % CHECKPOINT and frame in self._states:
            del self._states[frame]  # its iterations stay: they are the bake's statistics

    def _guard(self, frame: int, state: State) -> None:
        """Record the largest offset played and say, once, when it passes OFFSET_WARNING of the character's size.

        The render vertices' own offsets (:meth:`offsets`), with every rule's parts put back (rigid and
        planted flesh, pieces left out of the volume): what plays.  The tet vertices' (the guard's probes,
        before issue 37) overstated it, up to 31 x on a bee whose wings follow their bones.
        """
        if frame < self.start:
            return  # pre-roll frames are discarded
        self._played(frame, state)
        assert self._last is not None
        # The jiggle's, not the physics skin's correction; a gait's travel is motion, not an offset.
        share = offset_share(self.drive.offset(state, frame, self._last[3]), self.drive.size)
        self.max_offset = max(self.max_offset, share)
        if share > OFFSET_WARNING:
            self._warnings.once("offset", offset_warning(frame, share, self.solver.stiffness_mode))

    def offsets(self, frame: int) -> np.ndarray:
        """World-space displacement (k, 3) of the render vertices from their linear blend skinning at
        ``frame`` (0 outside the range): the secondary motion, plus the drive's skin correction when
        it has one (the physics skin); when the drive does not jiggle, the correction alone."""
        rec = self.prepared.reconstructor
        if frame < self.start or frame > self.end:
            return np.zeros((rec.count, 3), dtype=rec.basis.dtype)
        return self._played(frame, self.state(frame))

    def _played(self, frame: int, state: State) -> np.ndarray:
        """The render vertices' offsets (k, 3) at ``frame`` in ``state`` as they play (:meth:`offsets`);
        the last frame's are kept, so the guard and the frame's reader compute them once."""
        if self._last is not None and self._last[0] == frame and self._last[1] == id(state):
            return self._last[2]
        secondary = self._secondary(frame, state)
        correction = self.drive.skin_correction(frame)
        u = secondary if correction is None else secondary + correction.astype(secondary.dtype)
        self._last = (frame, id(state), u, secondary)
        return u

    def _secondary(self, frame: int, state: State) -> np.ndarray:
        """The secondary motion (k, 3) of the render vertices at ``frame`` in ``state``, Amount applied."""
        rec = self.prepared.reconstructor
        if self.drive.jiggles:
            u = self.drive.displacement(state, frame)
        else:
            u = np.zeros((rec.count, 3), dtype=rec.basis.dtype)
        if self.solver.amount != 1.0:
            # Amount: how much of the follow-through shows.  A gain on the result, so the wobble and the
            # damping keep meaning what they say, and complementarity and invariances are untouched.
            u = u * u.dtype.type(self.solver.amount)
        return u

    def invalidate_after(self, frame: int) -> None:
        """Forget states after ``frame`` (e.g. the rig changed there)."""
        keep = max(frame, self.start)
        self._states = {f: s for f, s in self._states.items() if f <= keep}
        self.iterations = {f: i for f, i in self.iterations.items() if f <= keep}
        self.unconverged = {f: n for f, n in self.unconverged.items() if f <= keep}
        self.guard.forget_after(keep)
        self.drive.forget_after(keep)
        self._last = None
