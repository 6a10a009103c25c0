"""One definition of every user setting: name, default, range, one-line description.

The Blender properties (``skinmodes_addon/props.py``), the command-line flags
(``cli.py``), the Python API's settable names and its validation
(``api.py``) and the staleness checks (which settings need new modes, which
only a new simulation) are all derived from :data:`SETTINGS`.  Adding a
setting means adding one :class:`Setting` here and reading it where it acts.

stage says what a change invalidates: "character" needs new modes (the
prepared character), "solver" only a new simulation, "output" only the next
bake, "ui" nothing (a preset applies other settings).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from .errors import SkinmodesError

# Blender stores FloatProperty values as float32: 0.49 comes back as
# 0.49000000953674316.  Ranges accept that much round-off at their ends.
FLOAT32_SLACK = 1e-6


class SettingError(SkinmodesError):
    """A setting's value is out of its range or of the wrong kind."""


@dataclass(frozen=True)
class Choice:
    """One item of an enum setting: id (upper case, as Blender stores it), label, description."""

    id: str
    label: str
    description: str


@dataclass(frozen=True)
class Setting:
    """One user setting; kind follows from ``choices`` or the default's type."""

    name: str
    label: str
    description: str
    default: float | int | str | bool
    group: str
    stage: str
    minimum: float | None = None
    maximum: float | None = None
    soft_min: float | None = None
    soft_max: float | None = None
    choices: tuple[Choice, ...] = ()
    animatable: bool = False
    unit: str = ""
    subtype: str = ""

    @property
    def kind(self) -> str:
        if self.choices:
            return "enum"
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, int):
            return "int"
        if isinstance(self.default, float):
            return "float"
        return "str"

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``--wobble-hz``."""
        return "--" + self.name.replace("_", "-")

    def range_text(self) -> str:
        if self.kind == "enum":
            return "one of " + ", ".join(c.id.lower() for c in self.choices)
        if self.kind == "str":  # a name (vertex group, collection): it has no range
            return "(a name; empty for none)" if self.default == "" else "(a name)"
        if self.kind == "bool":
            return "(true or false)"
        lo = "-inf" if self.minimum is None else f"{self.minimum:g}"
        hi = "inf" if self.maximum is None else f"{self.maximum:g}"
        return f"[{lo}, {hi}]"

    def validate(self, value: object) -> float | int | str | bool:
        """The value in the setting's own type, or :class:`SettingError` naming the setting and its range."""
        kind = self.kind
        if kind == "enum":
            if not isinstance(value, str) or value.upper() not in {c.id for c in self.choices}:
                raise SettingError(f"{self.name} must be {self.range_text()}, got {value!r}")
            return value.upper()
        if kind == "str":
            if not isinstance(value, str):
                raise SettingError(f"{self.name} must be text, got {value!r}")
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                raise SettingError(f"{self.name} must be true or false, got {value!r}")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SettingError(f"{self.name} must be a number in {self.range_text()}, got {value!r}")
        if kind == "int" and not float(value).is_integer():
            raise SettingError(f"{self.name} must be a whole number in {self.range_text()}, got {value!r}")
        x = float(value)
        slack = FLOAT32_SLACK * max(1.0, abs(x))
        if (
            not math.isfinite(x)
            or (self.minimum is not None and x < self.minimum - slack)
            or (self.maximum is not None and x > self.maximum + slack)
        ):
            raise SettingError(f"{self.name} must lie in {self.range_text()}, got {value!r}")
        if kind == "int":
            return int(x)
        # Snap float32 round-off at the ends back into the range.
        if self.minimum is not None:
            x = max(x, self.minimum)
        if self.maximum is not None:
            x = min(x, self.maximum)
        return x


def _choices(*items: tuple[str, str, str]) -> tuple[Choice, ...]:
    return tuple(Choice(*i) for i in items)


# How a training pose finds its skin-on-skin contact: the Pose-Space panel's items, the API's and the
# CLI's spellings (lower case) and core's (:data:`core.pipeline.poses.ContactSpec`: "auto", a painted
# GROUP's mask, or None) all come from here.
CONTACT_KINDS = _choices(
    ("AUTO", "Automatic", "Hold still the skin this pose presses together (surfaces closer than one surface edge)"),
    ("GROUP", "Vertex Group", "Hold still the vertices of a painted vertex group in this pose"),
    ("NONE", "None", "No contact in this pose"),
)
CONTACT_AUTO, CONTACT_GROUP, CONTACT_NONE = (c.id for c in CONTACT_KINDS)
# How a training pose's contact acts (issue 29): the Pose-Space panel's items; core takes a bool per pose
# (:func:`core.pipeline.poses.prepare_pose_space`'s one_sided).
POSE_CONTACT_MODES = _choices(
    ("STICK", "Stick", "The touching skin is held in this pose's modes: it neither separates nor slides"),
    ("ONE_SIDED", "One-Sided", "Skin on Skin keeps the touching skin apart near this pose: it may separate and slide"),
)
CONTACT_STICK, CONTACT_ONE_SIDED = (c.id for c in POSE_CONTACT_MODES)


# Material presets, in the scale-free controls and in physical units: their one definition.  The
# add-on ships each as a Blender preset file (presets/skinmodes/material/<Label>.py: what the panel's
# preset menu runs, in the format Blender's "Add Preset" writes), whose text is :func:`preset_file_text`
# of these values (a test checks the shipped files against it), so the CLI's --preset, the API, the
# Preset setting and the menu all give exactly these values.
PRESET_SUBDIR = "skinmodes/material"
# id -> what the preset is for, in the order of the Preset setting's items (Blender stores an enum
# by its index: append, never reorder).
PRESET_ROLES = {
    "JELLY": "Very soft and slow; appendages swing through, with more follow-through",
    "FAT": "Soft tissue, bellies and cheeks; tails and ears swing through",
    "MUSCLE": "Firmer flesh, less follow-through",
    "RUBBER": "Quick, springy vibrations, mostly in the skin",
}
# id -> the preset's label (its file's name in the menu).
PRESET_LABELS = {pid: pid.title() for pid in PRESET_ROLES}
# id -> the values the preset sets, in the order its file sets them: numbers as floats, switches
# (where things move, not only how much) as bools.
PRESETS: dict[str, dict[str, float | bool]] = {
    "JELLY": {
        "wobble_hz": 1.5,
        "damping_ratio": 0.1,
        "poisson_ratio": 0.3,
        "youngs_modulus": 2000.0,
        "density": 1000.0,
        "amount": 1.5,
        "swing_appendages": True,
    },
    "FAT": {
        "wobble_hz": 3.0,
        "damping_ratio": 0.2,
        "poisson_ratio": 0.4,
        "youngs_modulus": 10000.0,
        "density": 950.0,
        "amount": 1.0,
        "swing_appendages": True,
    },
    "MUSCLE": {
        "wobble_hz": 5.0,
        "damping_ratio": 0.35,
        "poisson_ratio": 0.4,
        "youngs_modulus": 50000.0,
        "density": 1060.0,
        "amount": 0.7,
        "swing_appendages": True,
    },
    "RUBBER": {
        "wobble_hz": 8.0,
        "damping_ratio": 0.1,
        "poisson_ratio": 0.45,
        "youngs_modulus": 1000000.0,
        "density": 1100.0,
        "amount": 1.0,
        "swing_appendages": False,
    },
}


def preset_file_text(pid: str) -> str:
    """The Blender preset file of a shipped preset, as "Add Preset" writes it: its id, then its values."""
    lines = ["import bpy", "", "settings = bpy.context.object.skinmodes  # type: ignore[union-attr]", ""]
    lines.append(f'settings.material_preset = "{pid}"')
    lines.extend(f"settings.{name} = {value!r}" for name, value in PRESETS[pid].items())
    return "\n".join(lines) + "\n"


def read_preset(path: Path) -> dict[str, object]:
    """The values a Blender preset file assigns: ``settings.<name> = <literal>`` lines, by name.

    Only what "Add Preset" writes is accepted (``import bpy``, the ``settings = ...``
    line, literal assignments), so reading a preset runs none of its code.
    """
    values: dict[str, object] = {}
    for node in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
        if isinstance(node, ast.Import) and [a.name for a in node.names] == ["bpy"]:
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id == "settings":
                continue  # settings = bpy.context.object.skinmodes
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "settings"
            ):
                values[target.attr] = ast.literal_eval(node.value)
                continue
        raise SkinmodesError(f"{path.name}: line {node.lineno} is not a preset value (settings.<name> = <value>)")
    return values


def _preset_choices() -> tuple[Choice, ...]:
    """The Preset setting's items: each shipped preset (its role, frequency and damping), then Custom."""
    shipped = [
        Choice(
            pid,
            PRESET_LABELS[pid],
            f"{role}: {PRESETS[pid]['wobble_hz']:g} Hz, damping ratio {PRESETS[pid]['damping_ratio']:g}",
        )
        for pid, role in PRESET_ROLES.items()
    ]
    return (*shipped, Choice("CUSTOM", "Custom", "Your own values"))


SETTINGS: tuple[Setting, ...] = (
    # Material ------------------------------------------------------------
    Setting(
        "material_preset",
        "Preset",
        "A starting point; editing a value by hand switches to Custom",
        "FAT",
        "material",
        "ui",
        choices=_preset_choices(),
    ),
    Setting(
        "stiffness_mode",
        "Stiffness",
        "How stiffness is given: a wobble frequency (the same at any scale) or physical units",
        "FREQUENCY",
        "material",
        "solver",
        choices=_choices(
            ("FREQUENCY", "Wobble Frequency", "The slowest jiggle has this frequency, whatever the character's size"),
            ("PHYSICAL", "Physical", "Young's modulus and density in SI units (honours the scene's Unit Scale)"),
        ),
    ),
    Setting(
        "wobble_hz",
        "Wobble",
        "Frequency of the slowest secondary motion in Hz: higher is stiffer",
        3.0,
        "material",
        "solver",
        minimum=0.05,
        maximum=100.0,
        soft_min=0.5,
        soft_max=15.0,
        animatable=True,
        unit="Hz",
    ),
    Setting(
        "damping_ratio",
        "Damping",
        "How quickly the jiggle dies out: 0 rings on, 1 stops without overshoot",
        0.2,
        "material",
        "solver",
        minimum=0.0,
        maximum=5.0,
        soft_max=1.0,
        animatable=True,
    ),
    Setting(
        "amount",
        "Amount",
        "How much follow-through shows: the simulated secondary motion times this (0 none, 1 as simulated)",
        1.0,
        "material",
        "solver",
        minimum=0.0,
        maximum=3.0,
        soft_max=2.0,
    ),
    Setting(
        "youngs_modulus",
        "Young's Modulus",
        "Physical stiffness in pascals (Physical mode): higher is stiffer and jiggles faster",
        1.0e4,
        "material",
        "solver",
        minimum=10.0,
        maximum=1.0e9,
        soft_min=100.0,
        soft_max=1.0e7,
        unit="Pa",
    ),
    Setting(
        "density",
        "Density",
        "Mass density in kg/m³ (Physical mode; water is 1000)",
        1000.0,
        "material",
        "solver",
        minimum=1.0,
        maximum=1.0e5,
        unit="kg/m³",
    ),
    Setting(
        "poisson_ratio",
        "Poisson Ratio",
        "Volume preservation: 0 is ARAP (fastest), 0.49 nearly incompressible",
        0.4,
        "material",
        "character",
        minimum=0.0,
        maximum=0.49,
    ),
    Setting(
        "stiffness_group",
        "Stiffness Mask",
        "Vertex group scaling stiffness: 0 is 10% as stiff, 1 is 100%",
        "",
        "material",
        "character",
    ),
    Setting(
        "density_group",
        "Density Mask",
        "Vertex group scaling density: 0 is half as dense, 1 is 1.5 times",
        "",
        "material",
        "character",
    ),
    # Momentum-leak mask ------------------------------------------------------
    Setting(
        "leak_mode",
        "Mask",
        "Where the flesh swings freely and where it follows the rig",
        "AUTO",
        "mask",
        "character",
        choices=_choices(
            ("AUTO", "Automatic", "The skin and thin appendages swing freely, the core follows the rig"),
            (
                "GROUP",
                "Vertex Group",
                "Paint where the flesh follows the rig (0), only its skin swings (0.5), or it swings through (1)",
            ),
        ),
    ),
    Setting(
        "leak_group", "Leak Group", "Vertex group of the momentum-leak mask", "skinmodes_leak", "mask", "character"
    ),
    Setting(
        "swing_appendages",
        "Swing Appendages",
        "Thin bone chains the animation does not plant (tails, ears, arms) swing from their base, "
        "not only their skin (Automatic mask)",
        True,
        "mask",
        "character",
    ),
    Setting(
        "planted_feet",
        "Planted Feet",
        "Hold still the flesh the animation puts on the ground (found over the frame range): feet do not slide",
        True,
        "mask",
        "character",
    ),
    Setting(
        "whole_character",
        "Whole Character",
        "Simulate this mesh with the other meshes its armature deforms (head, ears, clothes) as one body, "
        "so seams stay closed and parts move together; each mesh still bakes its own cache.  Off: this mesh "
        "alone, and it is left out of the others' body",
        True,
        "mask",
        "character",
    ),
    # Subspace ---------------------------------------------------------------
    Setting(
        "modes",
        "Modes",
        "Skinning eigenmodes: more gives richer, slower motion",
        16,
        "subspace",
        "character",
        minimum=1,
        maximum=128,
    ),
    Setting(
        "clusters",
        "Clusters",
        "Rotation clusters: more gives finer non-linear detail",
        100,
        "subspace",
        "character",
        minimum=1,
        maximum=5000,
    ),
    Setting(
        "target_tets",
        "Tet Resolution",
        "Target number of tetrahedra of the simulation mesh",
        15000,
        "subspace",
        "character",
        minimum=500,
        maximum=2_000_000,
    ),
    Setting(
        "tet_method",
        "Mesher",
        "How the volume is tetrahedralised",
        "AUTO",
        "subspace",
        "character",
        choices=_choices(
            ("AUTO", "Automatic", "The built-in lattice: fast, and the same tets on every machine"),
            ("LATTICE", "Lattice", "Built-in lattice around the surface; works on any input, deterministic"),
            ("WILDMESHING", "fTetWild", "Follows the surface closely; slower, and not the same twice"),
        ),
    ),
    Setting(
        "loose_parts",
        "Loose Parts",
        "What happens to separate pieces (eyes, teeth, armour plates) outside the body",
        "JOIN",
        "subspace",
        "character",
        choices=_choices(
            ("JOIN", "Join", "Pieces near the body join its volume; pieces far from it follow the rig only"),
            ("SKIP", "Skip", "Every piece outside the body follows the rig only"),
        ),
    ),
    Setting(
        "rigid_pieces",
        "Rigid Pieces",
        "Loose pieces bound to one bone: which follow their bone exactly, which jiggle",
        "AUTO",
        "subspace",
        "character",
        choices=_choices(
            (
                "AUTO",
                "Automatic",
                "Follow their bone on a hard-surface model (most of the mesh is such pieces: a robot of plates); "
                "else they jiggle with the flesh (wings, fins, ears, a head of pieces)",
            ),
            ("ALL", "All", "Every loose piece bound to one bone follows it exactly (plates, helmets, buttons)"),
            ("NONE", "None", "Every piece jiggles"),
            ("GROUP", "Vertex Group", "The pieces in the Rigid Group follow their bone; the others jiggle"),
        ),
    ),
    Setting(
        "rigid_group",
        "Rigid Group",
        "Vertex group of the pieces that follow their bone exactly (Rigid Pieces: Vertex Group)",
        "skinmodes_rigid",
        "subspace",
        "character",
    ),
    Setting(
        "subspace_method",
        "Subspace",
        "How an object without an armature moves its flesh (characters always use skinning eigenmodes)",
        "SKINNING",
        "subspace",
        "character",
        choices=_choices(
            (
                "SKINNING",
                "Skinning Eigenmodes",
                "Modes that complement the object's motion (Benchekroun et al.), as for characters",
            ),
            (
                "ROTATION_STRAIN",
                "Rotation-Strain",
                "Rotation-strain coordinates in the object's moving frame (Pan et al.): the flesh's large "
                "rotations stay exact; slower to start.  Uses at most 8 modes: each 2 more about triple the time "
                "per step and to prepare, for no accuracy gained (measured in the benchmark)",
            ),
        ),
    ),
    # Simulation -------------------------------------------------------------
    Setting(
        "rest_state",
        "Settle To",
        "Where the flesh comes to rest when the rig holds still",
        "POSE",
        "simulation",
        "solver",
        choices=_choices(
            ("POSE", "Animated Pose", "The jiggle dies out on the animated pose"),
            ("REST", "Rest Shape", "The flesh relaxes towards its rest shape (the paper's energy)"),
        ),
    ),
    Setting("substeps", "Sub-steps", "Solver steps per frame", 2, "simulation", "solver", minimum=1, maximum=32),
    Setting(
        "iterations",
        "Iterations",
        "Most solver iterations per step: a safety cap; a step stops once converged, and the bake says if one hits it",
        20,
        "simulation",
        "solver",
        minimum=1,
        maximum=200,
    ),
    Setting(
        "preroll",
        "Pre-roll",
        "Frames simulated before the start and discarded, so a shot starts with the flesh in motion",
        0,
        "simulation",
        "solver",
        minimum=0,
        maximum=1000,
    ),
    Setting(
        "reset_at_cuts",
        "Reset at Cuts",
        "Restart the simulation at rest where the rig jumps (a camera cut, a teleport) instead of flinging the flesh",
        False,
        "simulation",
        "solver",
    ),
    # Contact (issue 29) --------------------------------------------------------
    Setting(
        "ground",
        "Ground",
        "A ground plane pushes the jiggling surface out and holds it with friction (the rig itself is never moved)",
        False,
        "contact",
        "solver",
    ),
    Setting(
        "ground_height",
        "Ground Height",
        "Height of the ground plane along the world's Z axis, in scene units",
        0.0,
        "contact",
        "solver",
        minimum=-1e6,
        maximum=1e6,
    ),
    Setting(
        "colliders",
        "Colliders",
        "A collection whose mesh objects (give them Collision physics) push the jiggling surface out, "
        "read at every frame, animated or not; empty: none",
        "",
        "contact",
        "solver",
    ),
    Setting(
        "contact_friction",
        "Friction",
        "Coulomb friction of the ground and the colliders: 0 slides freely, 1 grips",
        0.5,
        "contact",
        "solver",
        minimum=0.0,
        maximum=2.0,
    ),
    Setting(
        "self_contact",
        "Skin on Skin",
        "Body parts push each other out where their skin meets, and let go when it parts (one-sided; "
        "training poses' contact sticks instead)",
        False,
        "contact",
        "solver",
    ),
    Setting(
        "pose_local_blend",
        "Local Blend",
        "A training pose with contact counts only near its own pose: half-way to the rest (or to a pose "
        "without contact) its contact weighs nothing; off, every pose counts everywhere (the seed's blend)",
        True,
        "contact",
        "character",
    ),
    # Physics skin -------------------------------------------------------------
    Setting(
        "physics_skin",
        "Physics Skin",
        "Replace linear blend skinning by a volume-preserving elastic solve driven by the same bones "
        "(Song et al.): no candy wrapper at twisted joints, no collapse at bent ones",
        False,
        "physics",
        "solver",
    ),
    Setting(
        "secondary_motion",
        "Secondary Motion",
        "Add the jiggle (turn off to bake the physics skin alone, as a deformer)",
        True,
        "physics",
        "solver",
    ),
    Setting(
        "pin_depth",
        "Pin Depth",
        "Share of the flesh around each bone, from the bone outwards, that follows the bone rigidly "
        "(vertices weighted to one bone alone always do); the rest is solved",
        0.3,
        "physics",
        "solver",
        minimum=0.05,
        maximum=0.95,
    ),
    Setting(
        "pin_rigid",
        "Pin Rigidly Bound",
        "Vertices weighted to one bone alone follow it rigidly wherever they lie (faster and stiffer); "
        "off, only Pin Depth pins them, so a soft part bound to one bone can bulge and sag",
        True,
        "physics",
        "solver",
    ),
    Setting(
        "physics_gravity",
        "Gravity",
        "Let the flesh the pins leave free sag under gravity (down: the world's -Z), as stiff as "
        "Young's Modulus and as heavy as Density make it",
        False,
        "physics",
        "solver",
    ),
    Setting(
        "physics_skin_from",
        "Physics Skin From",
        "Where the physics skin takes each element's rotation and its pins from",
        "WEIGHTS",
        "physics",
        "solver",
        choices=_choices(
            ("WEIGHTS", "From Weights", "Rotations blended by the skinning weights; pins where weights bind one bone"),
            (
                "BONES",
                "From Bones Only",
                "Rotations from the nearest bone, soft pins along the bones (Song et al.): no weights needed",
            ),
        ),
    ),
    # Locomotion (issue 26): a mesh without an armature crawls by a gait Find Gait searches for.  Stage "ui":
    # they shape the next search only; a found gait keeps the settings it was found with, and the session
    # notices a new gait, or Locomotion switched, by the gait it plays (skinmodes_addon/session/session.py).
    Setting(
        "locomotion",
        "Locomotion",
        "Play the gait Find Gait stored (a mesh without an armature crawls; Travel says where a bake puts it)",
        False,
        "locomotion",
        "ui",
    ),
    Setting(
        "gait_direction",
        "Direction",
        "Which way the gait travels, an axis of the object's own space (in the ground plane, Z up)",
        "POS_X",
        "locomotion",
        "ui",
        choices=_choices(
            ("POS_X", "+X", "Along the object's +X axis"),
            ("NEG_X", "-X", "Along the object's -X axis"),
            ("POS_Y", "+Y", "Along the object's +Y axis"),
            ("NEG_Y", "-Y", "Along the object's -Y axis"),
        ),
    ),
    Setting(
        "gait_period_min",
        "Shortest Period",
        "The quickest actuation cycle the search may use, in seconds",
        0.3,
        "locomotion",
        "ui",
        minimum=0.05,
        maximum=10.0,
        unit="s",
    ),
    Setting(
        "gait_period_max",
        "Longest Period",
        "The slowest actuation cycle the search may use, in seconds",
        1.5,
        "locomotion",
        "ui",
        minimum=0.05,
        maximum=10.0,
        unit="s",
    ),
    Setting(
        "gait_modes",
        "Actuation Modes",
        "How many of the lowest vibration modes the gait contracts and stretches (more: richer gaits, slower search)",
        6,
        "locomotion",
        "ui",
        minimum=1,
        maximum=16,
    ),
    Setting(
        "gait_generations",
        "Generations",
        "The search's budget: CMA-ES generations of 12 trial gaits per restart (3 restarts)",
        16,
        "locomotion",
        "ui",
        minimum=1,
        maximum=1000,
    ),
    Setting(
        "gait_search_tets",
        "Search Copy",
        "A mesh of more than 4 times this many tets is searched on a coarse copy of its shape this size and the "
        "gait carried back and refined on the mesh itself (the search's cost then barely grows with the mesh); "
        "0 searches the mesh itself",
        3000,
        "locomotion",
        "ui",
        minimum=0,
        maximum=1_000_000,
        soft_max=20_000,
    ),
    Setting(
        "gait_seed",
        "Seed",
        "The search's random seed: the same seed on the same mesh finds the same gait",
        0,
        "locomotion",
        "ui",
        minimum=0,
        maximum=2**31 - 1,
    ),
    # Stage "output": where the bake puts the gait's travel (skinmodes_addon/bake/travel.py); the simulation
    # is the same either way, only the next bake changes.
    Setting(
        "gait_travel",
        "Travel",
        "Where a bake puts the gait's travel",
        "CACHE",
        "locomotion",
        "output",
        choices=_choices(
            ("CACHE", "In the Cache", "The whole crawl in the point cache or shape keys; the object's transform stays"),
            (
                "OBJECT",
                "On the Object",
                "The body's rigid motion keyed on the object's location and rotation (in an action skinmodes "
                "makes), the cache holding the rest; refused if you animate the object's transform yourself",
            ),
        ),
    ),
    # Output -----------------------------------------------------------------
    Setting(
        "output",
        "Output",
        "What the bake writes",
        "PC2",
        "output",
        "output",
        choices=_choices(
            ("PC2", "Point Cache", "A .pc2 file and a Mesh Cache modifier; renders anywhere"),
            ("SHAPE_KEYS", "Shape Keys", "One shape key per frame under the armature; for FBX and glTF export"),
        ),
    ),
    Setting(
        "cache_dir",
        "Cache Folder",
        "Where point caches and subspace caches go (// is the .blend's folder; "
        "empty uses the Default Cache Folder of the add-on's preferences)",
        "",
        "output",
        "character",
        subtype="DIR_PATH",
    ),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


def names(stage: str | None = None) -> tuple[str, ...]:
    """Names of every setting, or of those of one stage."""
    return tuple(s.name for s in SETTINGS if stage is None or s.stage == stage)


def validate_all(values: dict[str, object]) -> dict[str, float | int | str | bool]:
    """Every value checked before any is used: unknown names and bad values raise one line."""
    unknown = sorted(set(values) - set(BY_NAME))
    if unknown:
        raise SettingError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(BY_NAME))}")
    return {name: BY_NAME[name].validate(v) for name, v in values.items()}


for _values in PRESETS.values():  # a shipped preset out of range fails here, at import, not in a user's scene
    validate_all({name: value for name, value in _values.items()})


def core_default(name: str) -> float | int | str | bool:
    """A setting's default as core takes it: enum ids in lower case ("FAT" -> "fat")."""
    setting = BY_NAME[name]
    return str(setting.default).lower() if setting.kind == "enum" else setting.default


def core_values(cls: type, read: Callable[[str], object]) -> dict[str, object]:
    """The keyword arguments of dataclass ``cls`` that are user settings, read by name.

    Every field of ``cls`` named after a setting is filled with ``read(name)``
    (e.g. ``lambda n: getattr(props, n)``), enum ids in lower case; fields that
    are not user settings keep their defaults.  This is how the add-on builds
    core's settings objects: a new setting needs no line here or there.
    """
    out: dict[str, object] = {}
    for f in fields(cls):
        if f.name in BY_NAME:
            value = read(f.name)
            out[f.name] = str(value).lower() if BY_NAME[f.name].kind == "enum" else value
    return out
