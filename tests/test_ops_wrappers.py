"""fastgl.ops wraps every public compiled op under the op's name, taking the schema's arguments
in the schema's order, and offers nothing else but the pool controls and sample_hops' result."""

import inspect

import pytest
import torch
from fuzz_ops import registered_ops

import fastgl.ops

NOT_OPS = {"FrontierTrace", "HopsSample", "cached_bytes", "empty_cache"}


def is_private(op: str) -> bool:
    """Backward ops (called by autograd) and internal ops (exposed for tests) get no wrapper."""
    return op.startswith("_") or "_backward" in op


PUBLIC_OPS = [op for op in registered_ops() if not is_private(op)]


def test_all_is_what_the_package_offers():
    public = {name for name in dir(fastgl.ops) if not name.startswith("_")}
    assert set(fastgl.ops.__all__) == public
    assert public == set(PUBLIC_OPS) | NOT_OPS


# Wrappers that take a graph instead of its arrays: which schema arguments each of their own
# parameters stands for (random_walk's graph gives the arrays of its out_csr(), frontier_sample's
# and induced_subgraphs' their CSC, generators the seed; walks_per_node tiles starts and weighted
# picks the weight, so they stand for none). The other parameters are the schema's, in order.
GRAPH_WRAPPERS = {
    "random_walk": {
        "graph": ["indptr", "indices", "weight", "eid"],
        "walks_per_node": [],
        "weighted": [],
        "generator": ["seed"],
    },
    "frontier_sample": {"graph": ["indptr", "indices"], "generator": ["seed"]},
    "induced_subgraphs": {"graph": ["indptr", "indices", "eid"]},
}


@pytest.mark.parametrize("op", PUBLIC_OPS)
def test_wrapper_takes_the_schema_arguments_in_order(op):
    schema = getattr(torch.ops.fastgl, op).default._schema
    wrapper = inspect.signature(getattr(fastgl.ops, op))
    stands_for = GRAPH_WRAPPERS.get(op, {})
    covered = [name for p in wrapper.parameters for name in stands_for.get(p, [p])]
    assert covered == [argument.name for argument in schema.arguments]


def test_private_ops_have_no_wrapper():
    private = [op for op in registered_ops() if is_private(op)]
    assert private and not any(hasattr(fastgl.ops, op) for op in private)
