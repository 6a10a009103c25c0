"""Each region's own modes, their lowest frequency and their share (core/validation/region_spectrum.py).

A model small enough to solve by hand: two vertices, one mode (4 affine columns), the basis putting column 0
on vertex 0 and column 1 on vertex 1 alone.  K = diag(k) (x) I3 and A_M = diag(m) make every column an
independent oscillator at sqrt(k_a / m_a) / (2 pi), moving one vertex: each vertex's region owns exactly its
column's three modes.  Exact up to the eigensolver's round-off (1e-12 relative).
"""

import numpy as np

from core.validation.region_spectrum import OWN_SHARE, mode_energy, natural_modes, region_spectrum


def test_two_independent_oscillators_are_each_their_own_region():
    k = np.array([4.0, 9.0, 25.0, 36.0])
    m = np.array([1.0, 4.0, 1.0, 1.0])
    K, A_M = np.kron(np.diag(k), np.eye(3)), np.diag(m)
    hz, V = natural_modes(K, A_M)
    assert np.allclose(hz, np.repeat(np.sort(np.sqrt(k / m)), 3) / (2 * np.pi), rtol=1e-12)
    Y = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    masses = np.array([2.0, 6.0])
    energy = mode_energy(Y, masses, V)
    assert energy.shape == (2, 12)
    moving = energy.sum(axis=0) > 0.5  # columns 2 and 3 move no vertex: no energy anywhere
    assert moving.sum() == 6 and np.allclose(energy[:, moving].sum(axis=0), 1.0, rtol=1e-12)
    first = region_spectrum(hz, energy, masses, np.array([True, False]))
    second = region_spectrum(hz, energy, masses, np.array([False, True]))
    assert first.own == second.own == 3 and OWN_SHARE <= 1.0
    assert np.isclose(first.lowest_hz, 2.0 / (2 * np.pi), rtol=1e-12)  # sqrt(4 / 1)
    assert np.isclose(second.lowest_hz, 1.5 / (2 * np.pi), rtol=1e-12)  # sqrt(9 / 4)
    assert np.isclose(first.share, 3 / 12) and np.isclose(second.share, 3 / 12)
    assert np.isclose(first.mass, 0.25) and np.isclose(second.mass, 0.75)
    nobody = region_spectrum(hz, energy, masses, np.array([False, False]))
    assert np.isnan(nobody.lowest_hz) and nobody.own == 0 and nobody.share == 0.0
