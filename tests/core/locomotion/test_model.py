"""The locomotion model (core/locomotion/model.py): what a step touches does not grow with the mesh."""

import numpy as np

from .conftest import slug_model


def _run_time_sizes(model):
    return {
        "A_M": model.A_M.shape,
        "P": model.P.shape,
        "K": model.K.shape,
        "G_target": model.G_target.shape,
        "rest": model.rest.shape,
        "Y_samples": model.Y_samples.shape,
        "orient": model.orient.shape,
    }


def test_step_cost_is_structurally_independent_of_the_mesh():
    """Every array the step reads has the same shape at two resolutions (about 8x the tets)."""
    coarse_mesh, _, coarse = slug_model(cells_per_unit=3)
    fine_mesh, _, fine = slug_model(cells_per_unit=6)
    assert fine_mesh.t > 4 * coarse_mesh.t
    assert _run_time_sizes(coarse) == _run_time_sizes(fine)


def test_centre_of_mass_in_reduced_form(slug):
    mesh, mat, model = slug
    from core.model.fem import lumped_mass

    m = lumped_mass(mesh, mat.density)
    rng = np.random.default_rng(0)
    Z = model.rest + 0.05 * rng.standard_normal(model.rest.shape)
    np.testing.assert_allclose(model.centre_of_mass(Z), m @ model.positions(Z) / m.sum(), atol=1e-12)


def test_samples_can_sit_on_the_underside():
    mesh, _, model = slug_model(cells_per_unit=3, samples=12, sample_band=((0.0, 0.0, 1.0), 0.25))
    assert len(model.samples) == 12
    assert mesh.X[model.samples, 2].max() <= -0.25 + 0.25 * 0.5 + 1e-12
