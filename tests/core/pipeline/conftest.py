"""Fixtures of the pipeline's tests: the two-sphere character, prepared without and with its bones' segments."""

import pytest

from tests.core.pipeline.characters import prepare, two_spheres


@pytest.fixture(scope="module")
def character():
    return two_spheres()


@pytest.fixture(scope="module")
def prepared(character, tmp_path_factory):
    return prepare(character, tmp_path_factory.mktemp("c"))


@pytest.fixture(scope="module")
def skinned(tmp_path_factory):
    """The two-sphere character with its bones' segments (the physics skin pins around them)."""
    return prepare(two_spheres(segments=True), tmp_path_factory.mktemp("p"))
