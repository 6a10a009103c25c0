"""Pose-space subspaces (Xu & Barbič, seed 001): RBF weights of the rig pose, Procrustes-aligned
per-pose bases, and their blend with its reduced products precomputed per pose pair."""
