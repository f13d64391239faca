"""Shared pytest setup: the `cuda` marker and a hypothesis profile without deadlines.

pytest puts this directory on sys.path (rootdir conftest, prepend import mode), so test files in
tests/ and tests/cuda can `import reference`.
"""

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

# Kernels run at very different speeds on loaded CI machines: never fail on time.
settings.register_profile(
    "fastgl",
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# `ci` draws the same examples on every run (reproducible failures); the default profile explores.
settings.register_profile("ci", parent=settings.get_profile("fastgl"), derandomize=True)
settings.load_profile(os.environ.get("FASTGL_HYPOTHESIS_PROFILE", "fastgl"))


# The benchmarks are part of the checkout, not of the installed package: tests that drive them
# import them from the repository root. Appended, so an installed fastgl (the DGL environment's)
# still wins over the source tree.
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.append(_REPO_ROOT)


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a GPU")


def _bake_pyg_sage_propagate_with_fusion():
    """PyG generates a layer class's ``propagate`` once, from its first instance: when the first
    ``torch_geometric.nn.SAGEConv`` of a process has a non-fusable ``aggr`` (lstm, a module, a
    list), every later one raises "'message_and_aggregate' not implemented" on a sparse
    ``adj_t``. Tests compare fastgl against PyG's SAGEConv in every configuration, in any order,
    so the first instance is made here with a fusable ``aggr``."""
    try:
        from torch_geometric.nn import SAGEConv
    except ImportError:  # the DGL environment has no PyG
        return
    SAGEConv(1, 1, aggr="mean")


_bake_pyg_sage_propagate_with_fusion()
