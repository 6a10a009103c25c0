"""The actuation signal (core/locomotion/signal.py)."""

import numpy as np

from core.locomotion.signal import Sinusoids, actuation_signal, decode, parameter_count


def test_signal_is_the_sum_of_sinusoids():
    rng = np.random.default_rng(0)
    s = Sinusoids(rng.standard_normal((3, 2)), rng.uniform(0.5, 2.0, (3, 2)), rng.standard_normal((3, 2)))
    t = np.linspace(0, 3, 7)
    a = actuation_signal(t, s)
    brute = np.zeros((len(t), 3))
    for n, tt in enumerate(t):  # the formula, term by term
        for i in range(3):
            for j in range(2):
                brute[n, i] += s.amplitude[i, j] * np.sin(2 * np.pi * (tt / s.period[i, j] + s.phase[i, j]))
    np.testing.assert_allclose(a, brute, atol=1e-14)


def test_decode_bounds_every_sample():
    m, k = 4, 2
    x = 50.0 * np.random.default_rng(1).standard_normal(parameter_count(m, k))
    s = decode(x, m, k, 0.2, (0.3, 1.5))
    assert np.abs(s.amplitude).max() <= 0.2
    assert s.period.min() >= 0.3 and s.period.max() <= 1.5
    assert np.all(decode(np.zeros(parameter_count(m, k)), m, k, 0.2, (0.3, 1.5)).amplitude == 0.0)
