"""Contact in the reduced space, shared by the jiggle and locomotion: sample points on the surface pushed
out of a ground plane and of collider meshes, and body parts out of each other, by a one-sided penalty
with lagged Coulomb friction (colliders.py, scene.py, penalty.py, surface.py, pairs.py; ground.py is
locomotion's plane solver).
"""
