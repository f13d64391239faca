"""The CPU buffers fastgl keeps for reuse.

Large CPU buffers (256 KB and up) of the samplers (hash tables, edge arrays, per-hop scratch, the
subgraphs' edges of ``induced_subgraphs``) and of the ``id_map``/``match`` hash tables are
recycled within the process instead of being handed back to the operating system: a new buffer
would cost one page fault per 4 KB page at its first write, a quarter of a sampler call's time at
products scale. Up to 1 GiB of free buffers is kept, in power-of-two size classes, much as
PyTorch's CUDA caching allocator keeps GPU memory; :func:`empty_cache` hands it back. A sample's
tensors hold whole blocks (up to twice their size) until they are freed.
"""

from fastgl import _C


def cached_bytes() -> int:
    """Bytes of free CPU buffers fastgl keeps for reuse (not counting buffers in use)."""
    return _C.cached_bytes()


def empty_cache() -> int:
    """Frees every CPU buffer fastgl keeps for reuse; returns the number of bytes freed.

    Buffers that results still hold (a sample's tensors) are not affected; they return to the
    cache when those tensors are freed.
    """
    return _C.empty_cache()
