"""Issue 12, item 12: a loose vertex far from the body is not extrapolated.

Before: a vertex 2 m away from the body moved 5.8 m (barycentric weights
extrapolated far outside their tet).  The embedding now projects such a
vertex onto the simulated volume, so it moves with the rig plus centimetres
of jiggle.  Its offset must also stay a convex combination of the tet
vertices' offsets, never more than the largest of them, frame by frame:
that needs the reconstruction to evaluate the (affine) modes at the
projected point too (``core.geometry.embedding.embedded_positions``).  Tolerances:
1e-5 m on played-back float32 positions, 1e-6 m on offsets under 0.5 m.
"""

import numpy as np
import pytest

from tests.addon.helpers import evaluated

# (where, the vertex group that carries it): beside the belly, and beyond the tail's tip (a chain's end).
PLACES = {
    "beside the body": ((2.42, 0.1, 0.45), "body"),
    "beyond the tail": ((0.0, -3.15, 0.75), "tail.3"),
}


def add_far_vertex(obj, place):
    co, group = PLACES[place]
    mesh = obj.data
    mesh.vertices.add(1)
    far = len(mesh.vertices) - 1
    mesh.vertices[far].co = co
    mesh.update()
    obj.vertex_groups[group].add([far], 1.0, "REPLACE")
    return far


@pytest.mark.parametrize("place", list(PLACES))
def test_a_loose_vertex_2m_away_moves_with_the_rig(addon, shot, place):
    import bpy

    obj, _arm, scene, _folder = shot
    far = add_far_vertex(obj, place)
    summary = addon.api.bake(obj, output="PC2")
    assert any("outside the simulated volume" in m for m in summary["messages"])
    session = addon.session.session_for(obj)
    cache = obj.modifiers["Skinmodes Cache"]
    far_max = 0.0
    for f in range(1, 25):
        scene.frame_set(f)
        baked = evaluated(bpy, obj)[far]
        cache.show_viewport = False
        rig = evaluated(bpy, obj)[far]
        cache.show_viewport = True
        offset = session.offsets_local(f)[far]
        assert np.abs(baked - rig - offset).max() < 1e-5, f  # it plays back the rig plus its offset
        far_max = max(far_max, float(np.linalg.norm(offset)))
    assert 0.0 < far_max < 0.5  # centimetres of jiggle with the flesh it hangs on, not metres (5.8 m before)


def convex_bound_holds(simulation, offsets_of_far):
    """Per frame: the far vertex's offset is at most the largest tet-vertex offset (1e-6 m)."""
    for f in range(simulation.start, simulation.end + 1):
        tets = np.linalg.norm(simulation.drive.simulator.displacement(simulation.state(f)), axis=1).max()
        if np.linalg.norm(offsets_of_far(f)) > tets + 1e-6:
            return False
    return True


@pytest.mark.parametrize("place", list(PLACES))
def test_modes_evaluated_at_the_projected_point_stay_within_the_tets_offsets(addon, shot, place):
    """The helper the reconstruction needs, checked on the session's own model and embedding."""
    obj, _arm, scene, _folder = shot
    far = add_far_vertex(obj, place)
    session = addon.session.build_session(obj, scene)
    addon.session.sample_range(session, scene, session.missing_frames(session.end))
    simulation = session.ensure_simulation()
    prep = session.prepared
    core = addon.core
    points = core.geometry.embedding.embedded_positions(
        prep.embedding, prep.mesh.X, prep.mesh.T, session.character.rest
    )
    inside = ~prep.embedding.outside
    assert np.array_equal(points[inside], session.character.rest[inside])  # inside: untouched, bit for bit
    weights = core.geometry.embedding.interpolate(prep.embedding, prep.mesh.T, prep.model.weights)
    projected = core.dynamics.reconstruct.Reconstructor(prep.model, weights[far : far + 1], points[far : far + 1])
    assert convex_bound_holds(simulation, lambda f: projected.displacement(simulation.state(f).z)[0])


def test_the_baked_offset_of_a_far_vertex_stays_within_the_tets_offsets(addon, shot):
    obj, _arm, _scene, _folder = shot
    far = add_far_vertex(obj, "beyond the tail")
    addon.api.bake(obj, output="PC2")
    simulation = addon.session.session_for(obj).ensure_simulation()
    assert convex_bound_holds(simulation, lambda f: simulation.offsets(f)[far])
