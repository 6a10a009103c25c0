"""Contact in the reduced space, shared by the jiggle and locomotion: surface samples pushed out of the ground
and collider meshes, body parts out of each other; one-sided penalty, lagged Coulomb friction (colliders.py,
scene.py, penalty.py, surface.py, pairs.py; ground.py is locomotion's plane solver)."""
