"""Modal actuation locomotion (Benchekroun et al., seed 002): actuation modes, the simulation subspace,
covariance tensors, the actuated step, signals, objective, CMA-ES, the gait search (coarse copy and
transfer for large meshes), stored gaits and the drive; ground contact lives in core/contact.
"""
