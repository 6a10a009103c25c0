"""The reduced space (Benchekroun et al. 2023, §4-§6): skinning eigenmodes, skinning clusters
and the reduced model's precomputed products.
"""
