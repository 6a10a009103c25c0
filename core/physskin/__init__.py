"""Physics skinning (Song et al., seed 004): pins and rotations from the weights or the bones alone, the
solve with fixed rotations and the exact volume (solve.py), and the seed's mixed energy for validation."""
