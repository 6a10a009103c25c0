"""The bake-hash cases: each names a distinct bake and every drive of the pipeline is covered."""

from testkit.bake_hashes import CASES, Case
from testkit.real_characters import spec


def test_case_keys_are_distinct_and_name_their_settings():
    keys = [c.key for c in CASES]
    assert len(set(keys)) == len(keys)
    assert Case("fox", {"poisson_ratio": 0.45}, pose=True).key == "fox+poisson_ratio=0.45+poses"


def test_cases_cover_every_drive_and_known_characters():
    for case in CASES:
        spec(case.character)  # raises KeyError for a character the kit does not know
    assert any(c.settings.get("physics_skin") for c in CASES)  # the physics-skin drive
    assert any(c.pose for c in CASES)  # the pose-space drive
    assert any(not c.settings and not c.pose for c in CASES)  # the rig drive with defaults
