"""The physical model on a tet mesh: FEM operators, materials, the rig and its weights inside the
volume, the momentum-leak field and the rig-complementarity constraint.
"""
