"""Physics skinning (Song et al., seed 004): tets and pins assigned to bones, per-tet rotations from the
rig, and the prefactored quadratic solve that turns bone transforms into vertex positions."""
