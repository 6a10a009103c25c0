"""Material parameters (core/materials.py)."""

import numpy as np
import pytest

from core.errors import MaterialError
from core.model.materials import MAX_POISSON, Material, lame_parameters, scaled_field
from core.settings import PRESETS


def test_lame_parameters_match_the_textbook_formulas():
    mu, lam = lame_parameters(1e4, 0.25)
    assert mu == pytest.approx(4000.0)
    assert lam == pytest.approx(4000.0)
    mu0, lam0 = lame_parameters(1e4, 0.0)
    assert lam0 == 0.0 and mu0 == pytest.approx(5000.0)


@pytest.mark.parametrize("E,nu", [(-1.0, 0.3), (np.nan, 0.3), (1e4, 0.5), (1e4, -0.1)])
def test_unphysical_materials_are_rejected(E, nu):
    with pytest.raises(MaterialError):
        lame_parameters(E, nu)


def test_presets_are_valid_and_ordered_by_stiffness():
    order = ("JELLY", "FAT", "MUSCLE", "RUBBER")
    for key in ("youngs_modulus", "wobble_hz"):
        values = [PRESETS[k][key] for k in order]
        assert values == sorted(values)
    for p in PRESETS.values():
        Material.uniform(4, p["youngs_modulus"], p["poisson_ratio"], p["density"])


def test_the_slider_maximum_stored_as_float32_is_accepted():
    """Blender stores 0.49 as float32 (0.49000000953...); it must not be rejected."""
    _, lam = lame_parameters(1e4, float(np.float32(MAX_POISSON)))
    assert np.isfinite(lam) and lam == pytest.approx(lame_parameters(1e4, MAX_POISSON)[1])


def test_painted_mask_scales_the_base_value():
    T = np.array([[0, 1, 2, 3], [1, 2, 3, 4]])
    mask = np.array([0, 0, 0, 0, 1.0])
    f = scaled_field(T, 100.0, mask, 0.5, 2.0)
    assert f[0] == pytest.approx(50.0)
    assert f[1] == pytest.approx(100.0 * (0.5 + 1.5 * 0.25))
    with pytest.raises(MaterialError):
        Material.from_fields(np.ones(2), np.zeros(2), np.array([1.0, 0.0]))
