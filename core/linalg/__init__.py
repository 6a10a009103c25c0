"""Linear algebra shared by every room: closest rotations (polar decomposition), per-cluster 3x3
row layouts, sparse SPD factorisation and the constrained generalised eigensolver.
"""
