"""Bone weights extended into the volume (core/interior_weights.py)."""

import numpy as np

from core.geometry.primitives import box_tet_mesh
from core.geometry.tetmesh import boundary_faces
from core.model.interior_weights import volume_bone_weights
from core.validation.scenes import chain_weights


def test_partition_of_unity_nonnegative_and_surface_weights_kept():
    X, T = box_tet_mesh((8, 3, 3), (4.0, 1.0, 1.0))
    F = boundary_faces(T)  # the painted surface is the tet mesh's own boundary
    Ws = chain_weights(X, np.array([0.0, 2.0, 4.0]))
    rng = np.random.default_rng(0)
    Ws = Ws * rng.uniform(0.5, 1.5, Ws.shape)
    Ws /= Ws.sum(axis=1, keepdims=True)
    W = volume_bone_weights(X, T, X, F, Ws)
    assert np.abs(W.sum(axis=1) - 1).max() < 1e-12
    assert W.min() >= 0.0
    bnd = np.unique(F)
    # On the surface the painted weights come back (closest point is the vertex itself).
    assert np.abs(W[bnd] - Ws[bnd]).max() < 1e-6


def test_weights_transfer_from_a_different_surface():
    X, T = box_tet_mesh((6, 3, 3), (3.0, 1.0, 1.0))
    Fs = boundary_faces(T)
    Vs = X * 1.02 - 0.01  # a slightly larger render surface
    Ws = np.stack([Vs[:, 0] / 3.0, 1 - Vs[:, 0] / 3.0], axis=1).clip(0, 1)
    W = volume_bone_weights(X, T, Vs, Fs, Ws)
    # A linear field is reproduced by transfer + harmonic extension (up to the 2% offset).
    assert np.abs(W[:, 0] - X[:, 0] / 3.0).max() < 0.03
