"""A pose-space reduced model: per-pose skinning bases, aligned, with every product the solver needs
precomputed per pose or per pose pair, and blended at any rig pose (Xu & Barbič, §5).

Pose 0 is the rest pose (identity bone maps) with the rest model's own modes;
it is the root of the alignment tree, so the rest model's basis is never turned
and a model blended at rest is the rest model (to round-off).  Clusters,
material, masses, leak field and the rig's own products (C_R) are the rest
model's: only the subspace changes with the pose.  The solver's products split
by how they depend on the basis Y(W) = W ⊙ [Xn | 1] (4m = q columns):

    per pose pair (k, k, q, q):  A_L = Y_i^T Ls Y_j,  A_M = Y_i^T M Y_j
    per pose      (k, ., q):     C_W = Gc D Y_i,  A_LR = Y_i^T Ls Y_rig,  A_MR = Y_i^T M Y_rig,
                                 g = Y_i^T m (gravity)

so blending at a pose costs O(k^2 q^2 + k q (3r + 8b)) and no pass over the mesh;
the blended weights W(p) (n, m), needed only to output displacements, cost O(k n m).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import SubspaceError
from ..geometry.tetmesh import TetMesh
from ..model.fem import scalar_laplacian
from ..model.materials import Material
from ..model.rig import LBSRig, lbs_basis, rest_parameters
from ..subspace.reduced import ReducedModel, cluster_gradient_operator, without_fibers
from . import rbf
from .align import Alignment, align_bases
from .blend import blend_basis, blend_pairs, blend_singles, column_scale, gram, normalisation, pair_products
from .contact import contact_vertices, surface_edge_length
from .modes import posed_skinning_modes


@dataclass
class PoseSpaceModel:
    """The rest model and k training poses (pose 0: rest).

    poses (k, 12 b) rig parameters; features (k, 9 b) and coefficients (k + 1, k): the RBF;
    alignment: the aligned weights (k, n, m) and their rotations; gram (k, k, m, m);
    A_L, A_M (k, k, q, q); C_W (k, 3r, q); A_LR, A_MR (k, q, 4b); gravity (k, q).
    """

    rest: ReducedModel
    poses: np.ndarray
    features: np.ndarray
    coefficients: np.ndarray
    alignment: Alignment
    gram: np.ndarray = field(repr=False)
    A_L: np.ndarray = field(repr=False)
    A_M: np.ndarray = field(repr=False)
    C_W: np.ndarray = field(repr=False)
    A_LR: np.ndarray = field(repr=False)
    A_MR: np.ndarray = field(repr=False)
    gravity: np.ndarray = field(repr=False)
    # Local support (issue 29): per-pose radii from rbf.support_radii (inf: contact-free), or None for
    # the global RBF (the default: bakes with training poses keep their bits).
    radii: np.ndarray | None = None
    # Contact kind per pose (issue 29): True where a pose's skin-on-skin contact is one-sided (no stick
    # basis: the body pairs of core.contact.pairs push the touching skin apart and let it separate and
    # slide); None: every pose sticks (or has no contact).
    one_sided: np.ndarray | None = None

    @property
    def k(self) -> int:
        return len(self.poses)

    @property
    def one_sided_contact(self) -> bool:
        """Whether some pose's contact is one-sided: the solver then needs the body pairs (Skin on Skin)."""
        return self.one_sided is not None and bool(np.any(self.one_sided))

    def pose_weights(self, p: np.ndarray) -> np.ndarray:
        """RBF weights (k,) of the training poses at rig parameters p (12 b,)."""
        f = rbf.pose_features(p)
        w = rbf.weights(self.coefficients, self.features, f)
        return w if self.radii is None else rbf.local_support(w, self.features, f, self.radii)

    def blend(self, w: np.ndarray, weights: bool = True) -> tuple[ReducedModel, np.ndarray]:
        """The reduced model blended with pose weights w (k,), and its gravity row Y^T m (q,).

        weights=False skips the one pass over the mesh, the blended weights (n, m): the model
        then carries the rest model's weights, right in shape only, so it may step the solver
        but never output a displacement (:class:`PoseSpaceSimulator` blends those itself).
        """
        w = np.asarray(w, dtype=np.float64)
        ups = normalisation(self.gram, w)
        s = column_scale(ups, 4)
        model = replace(
            self.rest,
            weights=blend_basis(self.alignment.bases, w, ups) if weights else self.rest.weights,
            A_L=blend_pairs(self.A_L, w, s, s),
            A_M=blend_pairs(self.A_M, w, s, s),
            C_W=blend_singles(self.C_W, w, s),
            A_LR=blend_singles(self.A_LR.transpose(0, 2, 1), w, s).T,
            A_MR=blend_singles(self.A_MR.transpose(0, 2, 1), w, s).T,
            timings={},
        )
        return model, (w @ self.gravity) * s

    def at(self, p: np.ndarray) -> tuple[ReducedModel, np.ndarray]:
        """:meth:`blend` at rig parameters p (12 b,)."""
        return self.blend(self.pose_weights(p))


def assemble_pose_space(
    rest: ReducedModel,
    material: Material,
    poses: np.ndarray,
    weights: np.ndarray,
    contact: np.ndarray | None = None,
    reach: float = 0.0,
) -> PoseSpaceModel:
    """A pose-space model from given per-pose weights (k, n, m) at poses (k, 12 b), pose 0 the rest.

    Used by :func:`build_pose_space`, and to put a rotated copy of a problem on exactly the same
    subspaces (the equivariance tests).  material: the rest model's (its mu sets the Laplacian).
    The rest model's fibers (core/model/fibers.py) are left out: the poses' products are the plain clusters'.
    contact (k,) bool: the poses whose basis holds contact; with reach > 0 their weights get local
    support (:func:`rbf.support_radii`), else the RBF is global.
    """
    rest = without_fibers(rest)
    if rest.rig_weights is None:
        raise SubspaceError("pose-space modes need an LBS rig: its bones define the poses")
    poses = np.asarray(poses, dtype=np.float64)
    W = np.asarray(weights, dtype=np.float64)
    if W.shape[0] != len(poses) or W.shape[1:] != rest.weights.shape:
        raise SubspaceError(f"expected one ({rest.n}, {rest.m}) basis per pose, got {W.shape}")
    features = np.array([rbf.pose_features(p) for p in poses])  # loop over poses, a handful
    coefficients = rbf.train(features)
    local = reach > 0.0 and contact is not None and bool(np.any(contact))
    radii = rbf.support_radii(features, np.asarray(contact, dtype=bool), reach) if local else None
    alignment = align_bases(W, rest.masses, features, root=0)
    mesh = TetMesh.from_arrays(rest.X, rest.T)
    Xn = (rest.X - rest.centre) / rest.scale
    Ys = np.stack([lbs_basis(Wi, Xn) for Wi in alignment.bases])  # (k, n, q)
    Ls = scalar_laplacian(mesh, material.mu)
    CD = cluster_gradient_operator(mesh, rest.labels, material.mu * mesh.volumes)
    YR = lbs_basis(rest.rig_weights, rest.X)
    LYR, MYR = Ls @ YR, rest.masses[:, None] * YR
    return PoseSpaceModel(
        rest=rest,
        poses=poses,
        features=features,
        coefficients=coefficients,
        alignment=alignment,
        gram=gram(alignment.bases, rest.masses),
        A_L=pair_products(Ys, Ls, Ys),
        A_M=pair_products(Ys, rest.masses, Ys),
        C_W=np.stack([np.asarray(CD @ Y) for Y in Ys]),
        A_LR=np.einsum("inq,nb->iqb", Ys, LYR),
        A_MR=np.einsum("inq,nb->iqb", Ys, MYR),
        gravity=np.einsum("inq,n->iq", Ys, rest.masses),
        radii=radii,
    )


def build_pose_space(
    rest: ReducedModel,
    material: Material,
    poses: np.ndarray,
    backend: str = "superlu",
    progress: Callable[[int, int], None] | None = None,
    contacts: list[np.ndarray | None] | None = None,
    hessian: str = "rest",
    reach: float = 0.0,
    one_sided: list[bool] | None = None,
) -> PoseSpaceModel:
    """Skinning eigenmodes for each of the training poses (k', 12 b) and the blended model.

    The rest pose is added as pose 0 (with the rest model's modes) unless poses[0] is the rest.
    contacts: per given pose, the vertices held still there (skin-on-skin contact, see
    :func:`detect_contacts`), or None.  hessian: "rest" (the solver's own energy, the default)
    or "pose" (each posed shape's, the seed's reading; :mod:`modes` says why it is not the
    default).  A pose without contact and with the rest Hessian reuses the rest modes.  reach > 0
    gives the poses with contact local support (0.5: none half-way to the nearest contact-free pose);
    0, the default, keeps the global RBF.  one_sided: per given pose, whether its contact is
    one-sided (issue 29): no stick basis (its contact is ignored here), and the model says so
    (:attr:`PoseSpaceModel.one_sided_contact`: the drive then adds the body pairs of
    :mod:`core.contact.pairs`, which let the touching skin separate and slide).
    progress(done, total) is called after each pose (a caller may raise there to cancel).
    Raises :class:`core.errors.MeshError` for a pose that inverts tets with hessian="pose".
    """
    if hessian not in ("rest", "pose"):
        raise SubspaceError(f"hessian must be 'rest' or 'pose', got {hessian!r}")
    if rest.rig_weights is None:
        raise SubspaceError("pose-space modes need an LBS rig: its bones define the poses")
    b = rest.rig_weights.shape[1]
    zero = rest_parameters(b)
    poses = np.atleast_2d(np.asarray(poses, dtype=np.float64))
    if poses.shape[1] != 12 * b:
        raise SubspaceError(f"each pose needs {12 * b} rig parameters, got {poses.shape[1]}")
    given = list(contacts) if contacts is not None else [None] * len(poses)
    sided = [bool(o) for o in one_sided] if one_sided is not None else [False] * len(poses)
    if len(given) != len(poses) or len(sided) != len(poses):
        raise SubspaceError(f"expected one contact set (or None) per pose, got {len(given)} for {len(poses)} poses")
    given = [None if o else c for c, o in zip(given, sided)]  # one-sided: the body pairs hold it, not the basis
    if not np.allclose(poses[0], zero, rtol=0.0, atol=1e-12):
        poses = np.vstack([zero, poses])
        given, sided = [None, *given], [False, *sided]
    mesh = TetMesh.from_arrays(rest.X, rest.T)
    rig = LBSRig(rest.rig_weights)
    bases = [rest.weights]
    for i, p in enumerate(poses[1:], start=1):  # loop over poses, a handful
        stick = given[i]
        if hessian == "rest" and (stick is None or len(stick) == 0):
            bases.append(rest.weights)  # the same eigenproblem: the rest modes
        else:
            posed = rig.positions(rest.X, p).reshape(-1, 3) if hessian == "pose" else None
            modes = posed_skinning_modes(
                mesh, posed, material, rest.masses, rig, rest.leak, rest.m, backend, stick=stick
            )
            bases.append(modes.weights)
        if progress is not None:
            progress(i, len(poses) - 1)
    held = np.array([s is not None and len(s) > 0 for s in given])
    model = assemble_pose_space(rest, material, poses, np.stack(bases), held, reach)
    return replace(model, one_sided=np.array(sided)) if any(sided) else model


def detect_contacts(rest: ReducedModel, poses: np.ndarray, distance: float | None = None) -> list[np.ndarray]:
    """Contact vertices (c_i,) of each pose (k, 12 b): surface vertices the pose presses together.

    distance: how close counts as touching; None takes the tet mesh's mean surface edge length
    (scale-free: a character imported at 100x finds the same contacts).
    """
    if rest.rig_weights is None:
        raise SubspaceError("pose-space modes need an LBS rig: its bones define the poses")
    d = surface_edge_length(rest.X, rest.T) if distance is None else float(distance)
    rig = LBSRig(rest.rig_weights)
    return [
        contact_vertices(rest.X, rig.positions(rest.X, p).reshape(-1, 3), rest.T, d)
        for p in np.atleast_2d(poses)  # loop over poses, a handful
    ]
