"""Time stepping in the reduced space (Benchekroun et al. 2023, §8): batched closest rotations,
per-cluster 3x3 matrices as rows, the local-global simulator, the wobble calibration and
reconstruction of any point set.
"""
