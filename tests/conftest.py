"""Shared pytest setup: the `cuda` marker and a hypothesis profile without deadlines.

pytest puts this directory on sys.path (rootdir conftest, prepend import mode), so test files in
tests/ and tests/cuda can `import reference`.
"""

import os

from hypothesis import HealthCheck, settings

# Kernels run at very different speeds on loaded CI machines: never fail on time.
settings.register_profile(
    "fastgl", deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# `ci` draws the same examples on every run (reproducible failures); the default profile explores.
settings.register_profile("ci", parent=settings.get_profile("fastgl"), derandomize=True)
settings.load_profile(os.environ.get("FASTGL_HYPOTHESIS_PROFILE", "fastgl"))


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a GPU")
