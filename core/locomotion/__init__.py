"""Modal actuation locomotion (Benchekroun et al., seed 002): actuation modes, the unconstrained simulation
subspace, covariance tensors, the actuated local-global step, ground contact, signals, objective and CMA-ES.
"""
