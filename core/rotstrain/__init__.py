"""Rotation-strain subspace dynamics (Pan, Bao & Huang, seed 003): RS coordinates from linear modes, their Poisson
reconstruction and extended basis, the configuration-dependent mass, a backward-Euler Newton solver, a floating frame.
"""
