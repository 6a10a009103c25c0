"""The reduced space (Benchekroun et al. 2023, §4-§6): the constrained eigensolver, skinning
eigenmodes, skinning clusters and the reduced model's precomputed products.
"""
