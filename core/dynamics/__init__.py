"""Time stepping in the reduced space (Benchekroun et al. 2023, §8): batched polar decomposition,
the local-global simulator, the wobble calibration and reconstruction of any point set.
"""
