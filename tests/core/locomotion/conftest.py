"""A soft slug (core.validation.scenes' bar) and its locomotion model, built once per session."""

import pytest

from core.locomotion.model import build_locomotion_model
from core.model.materials import Material
from core.validation.scenes import bar_scene


def slug_mesh(cells_per_unit: int = 4):
    """A 2 m x 0.5 m x 0.5 m bar along x, centred in y and z: its underside is z = -0.25."""
    return bar_scene(length=2.0, width=0.5, cells_per_unit=cells_per_unit).mesh


def slug_model(cells_per_unit: int = 4, **kw):
    mesh = slug_mesh(cells_per_unit)
    mat = Material.uniform(mesh.t, 5e4, 0.0, 1000.0)
    opts = dict(s=5, m=6, passive_clusters=5, actuation_clusters=1, samples=30, actuation_stiffness=2.0)
    opts.update(kw)
    return mesh, mat, build_locomotion_model(mesh, mat, **opts)


@pytest.fixture(scope="session")
def slug():
    return slug_model()


@pytest.fixture(scope="session")
def slug_clusters():
    """The same slug with two actuation clusters: the rotations then differ per cluster."""
    return slug_model(actuation_clusters=3)
