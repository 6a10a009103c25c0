"""Geometry: surfaces and their repair, winding numbers, tetrahedral meshes and the meshers that
make them, and the embedding of render vertices in tets.
"""
