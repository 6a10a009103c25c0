"""Contact in the reduced space, shared by the jiggle and locomotion: sample points on the surface pushed
out of a ground plane and of collider meshes by a one-sided penalty, with lagged Coulomb friction.
"""
