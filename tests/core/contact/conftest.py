"""The locomotion slug (a soft bar and its locomotion model) for the ground's tests, built once per session."""

import pytest

from tests.core.locomotion.conftest import slug_model


@pytest.fixture(scope="session")
def slug():
    return slug_model()
