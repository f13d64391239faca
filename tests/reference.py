"""Pure PyTorch / Python references for fastgl's core ops, and graph builders for the tests.

Nothing here calls fastgl: every reference works from the user's original ``edge_index`` (the
ground truth), so a bug in one fastgl op cannot hide a bug in another.

* :func:`csc_reference` / :func:`csc_reference_python`: CSC over incoming edges, stable by input
  order (a node's in-edges keep their order in ``edge_index``).
* :func:`id_map_reference`: ``prefix`` followed by the first occurrences of new ids.
* :func:`check_neighbor_sample` / :func:`check_blocks`: sampling is random, so instead of exact
  values these check that a multi-hop sample is a *valid* one (every edge exists, counts per
  node, first-occurrence node order hop by hop, layout fields).
* :func:`random_walk_reference`: random walks replayed draw for draw from the randomness
  contract, with a Python Philox (:func:`philox_bits`).
* graph builders: random graphs, empty graph, isolated nodes, a star / a hub of degree 100_000,
  int32 and int64 indices; and hypothesis strategies drawing them.
"""

import math
from collections import Counter
from collections.abc import Sequence

import torch
from hypothesis import strategies as st
from scipy.stats import chisquare
from torch import Tensor

INDEX_DTYPES = (torch.int32, torch.int64)
HUB_DEGREE = 100_000


# ---------------------------------------------------------------------------------------------
# CSC from edge_index
# ---------------------------------------------------------------------------------------------


def csc_reference(edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Tensor, Tensor]:
    """``(indptr int64 [N+1], indices [E] (dtype of edge_index), eid int64 [E])`` by a stable
    sort of the edges by target."""
    return csc_reference_of(edge_index[0], edge_index[1], num_nodes)


def csc_reference_of(src: Tensor, dst: Tensor, num_nodes: int) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`csc_reference` of separate ``src`` and ``dst`` (their dtypes may differ)."""
    dst = dst.to(torch.int64)
    counts = (
        torch.bincount(dst, minlength=num_nodes)
        if dst.numel()
        else torch.zeros(num_nodes, dtype=torch.int64)
    )
    indptr = torch.zeros(num_nodes + 1, dtype=torch.int64)
    indptr[1:] = torch.cumsum(counts, 0)
    eid = torch.sort(dst, stable=True).indices
    return indptr, src[eid], eid


def csc_reference_python(edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Tensor, Tensor]:
    """Same as :func:`csc_reference`, with Python lists (one bucket per target), for small
    graphs: an independent second opinion that does not rely on torch.sort."""
    src, dst = edge_index[0].tolist(), edge_index[1].tolist()
    buckets: list[list[int]] = [[] for _ in range(num_nodes)]
    for e, v in enumerate(dst):
        buckets[v].append(e)
    indptr, eid = [0], []
    for bucket in buckets:
        eid.extend(bucket)
        indptr.append(len(eid))
    return (
        torch.tensor(indptr, dtype=torch.int64),
        torch.tensor([src[e] for e in eid], dtype=edge_index.dtype),
        torch.tensor(eid, dtype=torch.int64),
    )


# ---------------------------------------------------------------------------------------------
# id_map
# ---------------------------------------------------------------------------------------------


def out_csr_reference(
    edge_index: Tensor, num_nodes: int, weight: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
    """``(indptr, indices, eid, weight)`` of the out-edge CSR (``CSCGraph.out_csr``) in plain
    PyTorch: the user's edges sorted by (source, target, position) with two stable sorts."""
    src, dst = edge_index[0].to(torch.int64), edge_index[1].to(torch.int64)
    by_target = torch.sort(dst, stable=True).indices
    eid = by_target[torch.sort(src[by_target], stable=True).indices]
    counts = torch.bincount(src, minlength=num_nodes)
    indptr = torch.cat([counts.new_zeros(1), counts.cumsum(0)])
    return indptr, edge_index[1][eid], eid, None if weight is None else weight[eid]


def id_map_reference(prefix: Sequence[int], ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """``(unique, local)``: ``unique`` is ``prefix`` then the ids not in it in first-occurrence
    order; ``local[i]`` is the position of ``ids[i]`` in ``unique``."""
    if isinstance(prefix, Tensor):
        prefix = prefix.tolist()
    if isinstance(ids, Tensor):
        ids = ids.tolist()
    position = {}
    unique = []
    for v in prefix:
        assert v not in position, "the reference expects a prefix of distinct ids"
        position[v] = len(unique)
        unique.append(v)
    local = []
    for v in ids:
        if v not in position:
            position[v] = len(unique)
            unique.append(v)
        local.append(position[v])
    return unique, local


def first_occurrence(values: Sequence[int]) -> list[int]:
    """Distinct values in the order they first appear."""
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


# ---------------------------------------------------------------------------------------------
# Multi-hop neighbor sampling: structure / validity check
# ---------------------------------------------------------------------------------------------


def available_in_edges(
    edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None
) -> Tensor:
    """``[N]`` int64: in-edges a node can draw from (weighted: only those of weight > 0)."""
    dst = edge_index[1].to(torch.int64).cpu()
    if dst.numel() == 0:
        return torch.zeros(num_nodes, dtype=torch.int64)
    mask = torch.ones_like(dst, dtype=torch.bool) if edge_weight is None else edge_weight.cpu() > 0
    return torch.bincount(dst[mask], minlength=num_nodes)


def expected_draws(available: Tensor, fanout: int, replace: bool) -> Tensor:
    """Edges drawn per transit: ``fanout=-1`` all; without replacement ``min(fanout, avail)``;
    with replacement ``fanout`` when anything is available."""
    if fanout < 0:
        return available.clone()
    if replace:
        return torch.where(
            available > 0, torch.full_like(available, fanout), torch.zeros_like(available)
        )
    return torch.clamp(available, max=fanout)


def check_neighbor_sample(
    sub,
    edge_index: Tensor,
    num_nodes: int,
    seeds: Tensor,
    fanouts: Sequence[int],
    replace: bool = False,
    edge_weight: Tensor | None = None,
    ordered: bool = True,
) -> None:
    """Asserts that ``sub`` (a SampledSubgraph) is a valid sample of ``fanouts`` around ``seeds``.

    ``edge_weight`` is the original per-edge weight when the sample was weighted (else None).
    ``ordered``: additionally check that a hop's edges are grouped by target in frontier order
    (the deterministic layout of the default mode, docs/contracts.md "Determinism").
    """
    edge_index = edge_index.cpu().to(torch.int64)
    src_of, dst_of = edge_index[0], edge_index[1]
    num_edges = src_of.numel()
    nodes, row, col, eid = (t.cpu() for t in (sub.nodes, sub.row, sub.col, sub.eid))
    seeds = seeds.cpu().to(torch.int64)
    num_hops = len(fanouts)

    for name, t in (
        ("nodes", nodes),
        ("row", row),
        ("col", col),
        ("eid", eid),
        ("seed_index", sub.seed_index.cpu()),
    ):
        assert t.dtype == torch.int64, f"{name} has dtype {t.dtype}"
        assert t.dim() == 1, f"{name} has shape {tuple(t.shape)}"
    assert row.numel() == col.numel() == eid.numel()

    # Layout fields.
    assert len(sub.num_sampled_nodes) == num_hops + 1
    assert len(sub.num_sampled_edges) == num_hops
    assert sum(sub.num_sampled_nodes) == nodes.numel()
    assert sum(sub.num_sampled_edges) == eid.numel()
    assert all(n >= 0 for n in sub.num_sampled_nodes + sub.num_sampled_edges)

    # Seeds first, deduplicated, first occurrence keeps its place; seed_index maps every seed.
    distinct_seeds = first_occurrence(seeds.tolist())
    assert sub.num_sampled_nodes[0] == len(distinct_seeds)
    assert sub.batch_size == len(distinct_seeds)
    assert nodes[: len(distinct_seeds)].tolist() == distinct_seeds
    assert sub.seed_index.cpu().tolist() == id_map_reference([], seeds.tolist())[1]
    assert torch.equal(nodes[sub.seed_index.cpu()], seeds)

    # Every sampled edge exists, with that global id.
    if eid.numel():
        assert int(eid.min()) >= 0 and int(eid.max()) < num_edges, "eid out of range"
        assert int(row.min()) >= 0 and int(row.max()) < nodes.numel()
        assert int(col.min()) >= 0 and int(col.max()) < nodes.numel()
        assert torch.equal(src_of[eid], nodes[row]), "edge source does not match nodes[row]"
        assert torch.equal(dst_of[eid], nodes[col]), "edge target does not match nodes[col]"
        if edge_weight is not None:
            assert bool((edge_weight.cpu()[eid] > 0).all()), "a zero-weight edge was drawn"

    # Rebuild the node list hop by hop from the global edges (first-occurrence order) and check
    # it against `nodes`, per-hop counts, and that hop h expands exactly the nodes of hop h-1.
    available = available_in_edges(edge_index, num_nodes, edge_weight)
    expected_nodes = list(distinct_seeds)
    position = {v: i for i, v in enumerate(expected_nodes)}
    hop_node_start, hop_node_end = 0, len(expected_nodes)
    edge_start = 0
    for hop, fanout in enumerate(fanouts):
        edge_end = edge_start + sub.num_sampled_edges[hop]
        hop_eid, hop_col = eid[edge_start:edge_end], col[edge_start:edge_end]
        # Targets of this hop are exactly the nodes new at the previous hop.
        if hop_col.numel():
            assert int(hop_col.min()) >= hop_node_start and int(hop_col.max()) < hop_node_end, (
                f"hop {hop + 1} has an edge whose target is not a node of hop {hop}"
            )
            if ordered:
                assert bool((hop_col[1:] >= hop_col[:-1]).all()), (
                    f"hop {hop + 1} edges are not grouped by target in frontier order"
                )
        frontier = nodes[hop_node_start:hop_node_end]
        per_target = (
            torch.bincount(hop_col - hop_node_start, minlength=frontier.numel())
            if hop_col.numel()
            else torch.zeros(frontier.numel(), dtype=torch.int64)
        )
        want = expected_draws(available[frontier], fanout, replace)
        assert torch.equal(per_target, want), (
            f"hop {hop + 1} (fanout {fanout}, replace={replace}): per-target counts "
            f"{per_target.tolist()} != expected {want.tolist()}"
        )
        if not replace or fanout < 0:
            # Without replacement (or taking all): no edge twice for one target. An edge has one
            # target and each node is a target at one hop only, so eids are distinct per hop.
            assert hop_eid.unique().numel() == hop_eid.numel(), (
                f"hop {hop + 1}: an edge was drawn twice without replacement"
            )
        # New nodes of this hop: sources in edge order, first occurrence, not seen before.
        for v in src_of[hop_eid].tolist():
            if v not in position:
                position[v] = len(expected_nodes)
                expected_nodes.append(v)
        assert sub.num_sampled_nodes[hop + 1] == len(expected_nodes) - hop_node_end, (
            f"hop {hop + 1}: num_sampled_nodes"
        )
        hop_node_start, hop_node_end = hop_node_end, len(expected_nodes)
        edge_start = edge_end
    assert nodes.tolist() == expected_nodes, "nodes are not in hop-by-hop first-occurrence order"
    if eid.numel():
        assert row.tolist() == [position[v] for v in src_of[eid].tolist()]
        assert col.tolist() == [position[v] for v in dst_of[eid].tolist()]
    check_blocks(sub, edge_index)


def check_blocks(sub, edge_index: Tensor) -> None:
    """Asserts the DGL-style blocks of ``sub``: input layer first, dst a prefix of src, the last
    block's dst are the seeds, block ``i`` holds the edges of hops ``1 .. L-i``, global ids."""
    edge_index = edge_index.cpu().to(torch.int64)
    blocks = sub.blocks
    num_layers = len(sub.num_sampled_edges)
    assert len(blocks) == num_layers
    node_ends = [sum(sub.num_sampled_nodes[: h + 1]) for h in range(num_layers + 1)]
    edge_ends = [sum(sub.num_sampled_edges[:h]) for h in range(num_layers + 1)]
    for i, block in enumerate(blocks):
        hops = num_layers - i
        assert block.num_src_nodes == node_ends[hops]
        assert block.num_dst_nodes == node_ends[hops - 1]
        assert block.num_dst_nodes <= block.num_src_nodes
        assert block.num_edges == edge_ends[hops]
        assert torch.equal(block.src_nodes.cpu(), sub.nodes.cpu()[: block.num_src_nodes])
        assert torch.equal(block.dst_nodes.cpu(), block.src_nodes.cpu()[: block.num_dst_nodes])
        src, dst, eid = block.src.cpu(), block.dst.cpu(), block.eid.cpu()
        if block.num_edges:
            assert int(src.max()) < block.num_src_nodes and int(src.min()) >= 0
            assert int(dst.max()) < block.num_dst_nodes and int(dst.min()) >= 0
            src_nodes = block.src_nodes.cpu()
            assert torch.equal(edge_index[0][eid], src_nodes[src])
            assert torch.equal(edge_index[1][eid], src_nodes[dst])
        if block.indptr is not None:  # the CSC offsets a sampler's block carries describe dst
            assert bool((dst[1:] >= dst[:-1]).all())
            counts = torch.bincount(dst, minlength=block.num_dst_nodes)
            assert torch.equal(
                block.indptr.cpu(), torch.cat([counts.new_zeros(1), counts.cumsum(0)])
            )
        if i > 0:  # consecutive blocks: each layer's sources are the previous layer's targets
            assert blocks[i - 1].num_dst_nodes == block.num_src_nodes
    if blocks:
        assert blocks[-1].num_dst_nodes == sub.num_sampled_nodes[0]
        assert torch.equal(blocks[-1].dst_nodes.cpu(), sub.nodes.cpu()[: sub.num_sampled_nodes[0]])
        assert blocks[0].num_edges == sub.eid.numel()


def induced_subgraphs_reference(
    indptr: Tensor, indices: Tensor, eid: Tensor | None, nodes: Tensor, ptr: Tensor
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """fastgl::induced_subgraphs in plain Python: per set, per vertex in order, its in-edges in
    slot order whose source is in the set, named by ``eid`` (or their slot)."""
    rows, cols, slots, edge_ptr = [], [], [], [0]
    indptr, indices, nodes, ptr = (t.tolist() for t in (indptr, indices, nodes, ptr))
    names = list(range(len(indices))) if eid is None else eid.tolist()
    for s in range(len(ptr) - 1):
        members = nodes[ptr[s] : ptr[s + 1]]
        position = {v: i for i, v in enumerate(members)}
        for i, v in enumerate(members):
            for k in range(indptr[v], indptr[v + 1]):
                if indices[k] in position:
                    rows.append(position[indices[k]])
                    cols.append(i)
                    slots.append(names[k])
        edge_ptr.append(len(rows))
    return tuple(torch.tensor(x, dtype=torch.int64) for x in (rows, cols, slots, edge_ptr))


def assert_same_subgraph(a, b) -> None:
    """Two SampledSubgraphs are identical (tensors compared on CPU)."""
    for name in ("nodes", "row", "col", "eid", "seed_index"):
        x, y = getattr(a, name).cpu(), getattr(b, name).cpu()
        assert torch.equal(x, y), f"{name} differs: {x.tolist()[:20]} vs {y.tolist()[:20]}"
    assert a.num_sampled_nodes == b.num_sampled_nodes
    assert a.num_sampled_edges == b.num_sampled_edges


# ---------------------------------------------------------------------------------------------
# Graph builders
# ---------------------------------------------------------------------------------------------


def random_edge_index(
    num_nodes: int, num_edges: int, dtype: torch.dtype = torch.int64, seed: int = 0
) -> Tensor:
    """``[2, E]`` uniformly random edges (self loops and multi-edges allowed)."""
    if num_nodes == 0:
        assert num_edges == 0
        return torch.empty(2, 0, dtype=dtype)
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, num_nodes, (2, num_edges), generator=gen).to(dtype)


def attributed_pyg_data(num_nodes: int, num_edges: int, seed: int):
    """A PyG ``Data`` of ``random_edge_index`` edges with node attributes ``x``, ``y``,
    ``node_id`` (each node's own id), edge attributes ``edge_id``, ``edge_attr`` and a
    non-tensor ``title``: what the drop-in loaders must slice (needs PyG)."""
    from torch_geometric.data import Data

    edge_index = random_edge_index(num_nodes, num_edges, seed=seed)
    return Data(
        x=torch.randn(num_nodes, 5),
        y=torch.arange(num_nodes) % 3,
        node_id=torch.arange(num_nodes),
        edge_id=torch.arange(num_edges),
        edge_attr=torch.randn(num_edges, 2),
        edge_index=edge_index,
        title="a graph",
    )


def empty_edge_index(dtype: torch.dtype = torch.int64) -> Tensor:
    return torch.empty(2, 0, dtype=dtype)


def star_edge_index(degree: int, center: int = 0, dtype: torch.dtype = torch.int64) -> Tensor:
    """Edges ``leaf -> center`` from leaves ``center+1 .. center+degree`` (in that order)."""
    leaves = torch.arange(center + 1, center + 1 + degree)
    return torch.stack([leaves, torch.full_like(leaves, center)]).to(dtype)


def cycle_with_a_side_node(n=30):
    """In-edge CSC of a cycle of ``n`` nodes (i+1 -> i), node n an in-neighbor of node 0 and of
    itself (its one slot is ``n + 1``), and node n+1 with a self-loop: a walker reaches node n
    only from node 0, so few samplers of a short run do."""
    indices = [1, n] + [(i + 1) % n for i in range(1, n)] + [n, n + 1]
    indptr = [0, 2] + [2 + i for i in range(1, n)] + [n + 2, n + 3]
    return torch.tensor(indptr), torch.tensor(indices)


def hub_edge_index(
    hub_degree: int = HUB_DEGREE,
    num_nodes: int = 1000,
    extra_edges: int = 3000,
    dtype: torch.dtype = torch.int64,
    seed: int = 0,
) -> tuple[Tensor, int]:
    """A random graph on ``num_nodes`` nodes plus node 0 with ``hub_degree`` in-edges (sources
    drawn with repeats: multi-edges have distinct edge ids). Returns ``(edge_index, N)``."""
    gen = torch.Generator().manual_seed(seed)
    hub_src = torch.randint(0, num_nodes, (hub_degree,), generator=gen)
    hub = torch.stack([hub_src, torch.zeros_like(hub_src)])
    rest = torch.randint(0, num_nodes, (2, extra_edges), generator=gen)
    return torch.cat([rest[:, : extra_edges // 2], hub, rest[:, extra_edges // 2 :]], 1).to(
        dtype
    ), num_nodes


def isolated_edge_index(
    num_nodes: int,
    num_edges: int,
    num_isolated: int,
    dtype: torch.dtype = torch.int64,
    seed: int = 0,
) -> tuple[Tensor, int]:
    """Random edges among the first ``num_nodes`` nodes, then ``num_isolated`` nodes with no
    edges at all. Returns ``(edge_index, N)``."""
    return random_edge_index(num_nodes, num_edges, dtype, seed), num_nodes + num_isolated


@st.composite
def edge_index_strategy(draw, max_nodes: int = 40, max_edges: int = 200, allow_empty: bool = True):
    """Draws ``(edge_index [2, E], num_nodes)`` with ``num_nodes >= max id + 1`` (so some nodes
    may be isolated), int32 or int64; sometimes all edges into a few nodes (high degree)."""
    num_nodes = draw(st.integers(0 if allow_empty else 1, max_nodes))
    dtype = draw(st.sampled_from(INDEX_DTYPES))
    if num_nodes == 0:
        return torch.empty(2, 0, dtype=dtype), 0
    num_edges = draw(st.integers(0, max_edges))
    seed = draw(st.integers(0, 2**31 - 1))
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    if draw(st.booleans()):  # concentrate targets on few nodes: high in-degrees
        hot = torch.randint(0, num_nodes, (min(3, num_nodes),), generator=gen)
        edge_index[1] = hot[torch.randint(0, hot.numel(), (num_edges,), generator=gen)]
    extra_isolated = draw(st.integers(0, 5))
    return edge_index.to(dtype), num_nodes + extra_isolated


def sorted_by_source(edge_index: Tensor) -> Tensor:
    """The edges in (source, target) order, as PyG's coalesced ``edge_index`` holds them (and
    duplicates kept): an edge list whose positions are its out-CSR's slots."""
    by_target = torch.sort(edge_index[1], stable=True).indices
    order = by_target[torch.sort(edge_index[0, by_target], stable=True).indices]
    return edge_index[:, order]


def rows_of_every_degree(max_degree: int) -> Tensor:
    """Edges of a graph where node d - 1 has d in-edges (d = 1 .. max_degree), from distinct,
    spread-out sources: every row length once, for draws that take rows almost whole."""
    dst = torch.arange(max_degree).repeat_interleave(torch.arange(1, max_degree + 1))
    row_start = dst * (dst + 1) // 2
    src = (dst + 3 * (torch.arange(len(dst)) - row_start) + 1) % max_degree
    return torch.stack([src, dst])


def random_weights(
    num_edges: int, seed: int = 0, zero_fraction: float = 0.2, dtype: torch.dtype = torch.float32
) -> Tensor:
    """Positive weights with roughly ``zero_fraction`` of them exactly zero."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.rand(num_edges, generator=gen, dtype=torch.float64) * 4 + 0.05
    w[torch.rand(num_edges, generator=gen) < zero_fraction] = 0
    return w.to(dtype)


# ---------------------------------------------------------------------------------------------
# Match-Reorder (match, overlap_counts) and gather_rows
# ---------------------------------------------------------------------------------------------


def match_reference(prev_nodes: Sequence[int], next_nodes: Sequence[int]) -> list[int]:
    """``position[j]``: the index of ``next_nodes[j]`` in ``prev_nodes`` (distinct ids), or -1."""
    if isinstance(prev_nodes, Tensor):
        prev_nodes = prev_nodes.tolist()
    if isinstance(next_nodes, Tensor):
        next_nodes = next_nodes.tolist()
    position = {}
    for p, v in enumerate(prev_nodes):
        assert v not in position, "the reference expects prev_nodes of distinct ids"
        position[v] = p
    return [position.get(v, -1) for v in next_nodes]


def overlap_counts_reference(nodes: Sequence[int], offsets: Sequence[int]) -> list[list[int]]:
    """``counts[i][j] = |set i ∩ set j|`` with set ``s = nodes[offsets[s]:offsets[s+1]]``."""
    if isinstance(nodes, Tensor):
        nodes = nodes.tolist()
    if isinstance(offsets, Tensor):
        offsets = offsets.tolist()
    sets = [set(nodes[offsets[s] : offsets[s + 1]]) for s in range(len(offsets) - 1)]
    for s, members in enumerate(sets):
        assert len(members) == offsets[s + 1] - offsets[s], "the reference expects distinct sets"
    return [[len(a & b) for b in sets] for a in sets]


def gather_rows_reference(
    x: Tensor, index: Tensor | None, out: Tensor, out_index: Tensor | None
) -> Tensor:
    """A copy of ``out`` with ``out[out_index[i]] = x[index[i]]`` (a missing index: 0, 1, ...),
    by plain PyTorch indexing on the CPU."""
    expected = out.detach().cpu().clone()
    x = x.detach().cpu()
    if index is None:
        n = out_index.numel() if out_index is not None else x.shape[0]
        index = torch.arange(n)
    if out_index is None:
        out_index = torch.arange(index.numel())
    expected[out_index.cpu().long()] = x[index.cpu().long()]
    return expected


# ---------------------------------------------------------------------------------------------
# sample_hops (batch 0: its draws are sample_neighbors' with the per-hop keys)
# ---------------------------------------------------------------------------------------------


def hop_key(key: int, hop: int) -> int:
    """The per-hop Philox key the compiled sampler derives from the call's key (the golden-ratio
    increment of splitmix64), as a signed int64 for the op schema."""
    return as_op_key((key + (hop + 1) * 0x9E3779B97F4A7C15) & ((1 << 64) - 1))


def as_op_key(key: int) -> int:
    """An unsigned 64-bit key as the signed int64 the op schema takes."""
    return key - (1 << 64) if key >= 1 << 63 else key


def sample_hops_reference(
    graph,
    seeds: Sequence[int],
    fanouts: Sequence[int],
    key: int,
    replace: bool = False,
    weighted: bool = False,
    layerwise: bool = False,
    disjoint: bool = False,
) -> dict[str, list]:
    """The first batch of ``fastgl::sample_hops``, hop by hop: ``sample_neighbors`` draws (its
    own tests compare it with the exact distributions) and a pure-Python first-occurrence
    relabel of node keys (``tree * N + node`` when disjoint)."""
    from fastgl.ops import sample_neighbors

    n = graph.num_nodes
    seeds = [int(s) for s in seeds]
    keys = [i * n + s for i, s in enumerate(seeds)] if disjoint else list(seeds)
    nodes, seed_local = id_map_reference([], keys)
    node_counts, edge_counts = [len(nodes)], []
    row, col, edge_ids = [], [], []
    frontier_begin = 0
    for hop, fanout in enumerate(fanouts):
        frontier_end = len(nodes)
        transits = [k % n if disjoint else k for k in nodes[frontier_begin:frontier_end]]
        ptr, nbr, pos = sample_neighbors(
            graph.indptr,
            graph.indices,
            graph.weight if weighted else None,
            torch.tensor(transits, dtype=torch.int64),
            fanout,
            replace=replace,
            seed=hop_key(key, hop),
        )
        counts = (ptr[1:] - ptr[:-1]).tolist()
        targets = [frontier_begin + p for p, c in enumerate(counts) for _ in range(c)]
        tree_base = [nodes[t] - nodes[t] % n if disjoint else 0 for t in targets]
        nodes, local = id_map_reference(nodes, [b + v for b, v in zip(tree_base, nbr.tolist())])
        row += local
        col += targets
        edge_ids += (graph.eid[pos] if graph.eid is not None else pos).tolist()
        node_counts.append(len(nodes) - frontier_end)
        edge_counts.append(len(local))
        frontier_begin = 0 if layerwise else frontier_end
    node_ids = [k % n if disjoint else k for k in nodes]
    degree = graph.in_degrees()
    return dict(
        nodes=node_ids,
        node_counts=node_counts,
        row=row,
        col=col,
        edge_ids=edge_ids,
        edge_counts=edge_counts,
        seed_local=seed_local,
        in_degrees=[int(degree[v]) for v in node_ids],
        tree=[k // n for k in nodes] if disjoint else [],
    )


# ---------------------------------------------------------------------------------------------
# sample_ranges: draws from explicit slot ranges
# ---------------------------------------------------------------------------------------------


def range_draw_counts(
    starts: Tensor, ends: Tensor, fanouts: Tensor, replace: bool, weight: Tensor | None = None
) -> Tensor:
    """Slots each pair of ``fastgl::sample_ranges`` draws, pair by pair in Python: the range's
    size (weighted: its positive-weight slots) through :func:`expected_draws` with the pair's own
    fanout."""
    counts = []
    for start, end, fanout in zip(starts.tolist(), ends.tolist(), fanouts.tolist()):
        available = end - start if weight is None else int((weight.cpu()[start:end] > 0).sum())
        counts.append(int(expected_draws(torch.tensor([available]), fanout, replace)[0]))
    return torch.tensor(counts, dtype=torch.int64)


def check_range_sample(
    ptr: Tensor,
    slots: Tensor,
    starts: Tensor,
    ends: Tensor,
    fanouts: Tensor,
    replace: bool,
    weight: Tensor | None = None,
) -> None:
    """Asserts that ``(ptr, slots)`` is a valid ``sample_ranges`` result: counts as the fanouts
    say, every slot inside its pair's range and of positive weight, distinct without
    replacement, and a fanout of -1 the whole range (its positive-weight slots) in order."""
    ptr, slots = ptr.cpu(), slots.cpu()
    starts, ends, fanouts = starts.cpu(), ends.cpu(), fanouts.cpu()
    assert ptr.dtype == slots.dtype == torch.int64
    assert ptr.shape == (starts.numel() + 1,) and int(ptr[0]) == 0
    assert int(ptr[-1]) == slots.numel()
    counts = ptr.diff()
    want = range_draw_counts(starts, ends, fanouts, replace, weight)
    assert torch.equal(counts, want), f"draw counts {counts.tolist()} != {want.tolist()}"
    for p, (start, end, fanout) in enumerate(zip(starts.tolist(), ends.tolist(), fanouts.tolist())):
        drawn = slots[int(ptr[p]) : int(ptr[p + 1])].tolist()
        assert all(start <= s < end for s in drawn), f"pair {p} drew outside [{start}, {end})"
        if weight is not None:
            assert all(float(weight[s]) > 0 for s in drawn), f"pair {p} drew a zero weight"
        if not replace or fanout < 0:
            assert len(set(drawn)) == len(drawn), f"pair {p} drew a slot twice"
        if fanout < 0:
            whole = [s for s in range(start, end) if weight is None or float(weight[s]) > 0]
            assert drawn == whole, f"pair {p} with fanout -1 did not take its whole range"


# ---------------------------------------------------------------------------------------------
# random_walk: the exact distribution of a step, and what every valid walk satisfies
# ---------------------------------------------------------------------------------------------


def walk_step_probabilities(
    edge_index: Tensor,
    start: int,
    current: int,
    previous: int | None = None,
    *,
    p: float = 1.0,
    q: float = 1.0,
    restart_prob: float = 0.0,
    ppr: bool = False,
    weight: Tensor | None = None,
) -> dict[tuple[int, int], float]:
    """Every outcome ``(next node, edge id)`` of one step of a walk from ``start`` now at
    ``current`` (coming from ``previous``; ``None``: a first-order step) with its exact
    probability, by enumerating ``current``'s out-edges in the user's edge list: edge ``e`` to
    ``x`` weighs ``weight[e]`` (1 unweighted) times node2vec's bias (``1/p`` back to
    ``previous``, 1 to an out-neighbor of ``previous``, ``1/q`` otherwise). A restart (before the
    move) or a node without positive-weight out-edges ends the walk, ``(-1, -1)``, or with
    ``ppr`` teleports it to its start, ``(start, -1)``, unless it stands at its start."""
    src, dst = edge_index[0].tolist(), edge_index[1].tolist()
    weights = [1.0] * len(src) if weight is None else weight.tolist()
    neighbors_of_previous = {x for u, x in zip(src, dst) if u == previous}

    def bias(x: int) -> float:
        if previous is None:
            return 1.0
        if x == previous:
            return 1 / p
        return 1.0 if x in neighbors_of_previous else 1 / q

    mass = {e: weights[e] * bias(dst[e]) for e, u in enumerate(src) if u == current}
    total = sum(mass.values())
    if total > 0:
        moves = {(dst[e], e): m / total for e, m in mass.items() if m > 0}
    else:  # a dead end
        moves = {(start, -1) if ppr and current != start else (-1, -1): 1.0}
    outcomes = {outcome: (1 - restart_prob) * share for outcome, share in moves.items()}
    if restart_prob > 0:
        restart = (start, -1) if ppr else (-1, -1)
        outcomes[restart] = outcomes.get(restart, 0.0) + restart_prob
    return outcomes


def walk_paths_fault(
    indptr: Tensor,
    indices: Tensor,
    weight: Tensor | None,
    starts: Tensor,
    nodes: Tensor,
    slots: Tensor,
    restart_prob: float,
    ppr: bool,
) -> str | None:
    """What is wrong with ``(nodes, slots)`` as ``fastgl::random_walk``'s walks over the out-edge
    CSR ``(indptr, indices, weight)``, or ``None``: walks begin at their starts, every move takes
    a slot of the current node's row (of positive weight) to its target, an ended walk stays
    ended, a teleport (slot -1) goes to the start and needs ``ppr``, and a walk stops or teleports
    only by a restart or at a node without drawable out-edges (with ``ppr``, stops only there
    when that node is its start)."""
    num_walks, num_nodes = starts.numel(), indptr.numel() - 1
    if nodes.dtype != torch.int64 or slots.dtype != torch.int64:
        return f"dtypes {nodes.dtype}, {slots.dtype} are not int64"
    if (
        nodes.dim() != 2
        or nodes.shape[0] != num_walks
        or slots.shape != (num_walks, nodes.shape[1] - 1)
    ):
        return f"shapes {tuple(nodes.shape)}, {tuple(slots.shape)} for {num_walks} walks"
    if not torch.equal(nodes[:, 0], starts.to(torch.int64)):
        return "the walks do not begin at their starts"
    if bool(((nodes < -1) | (nodes >= num_nodes)).any()):
        return "a node id is neither a node of the graph nor the padding -1"
    current, following = nodes[:, :-1], nodes[:, 1:]
    num_edges = indices.numel()
    positive = torch.ones(num_edges, dtype=torch.int64) if weight is None else weight > 0
    positive_before = torch.cat([torch.zeros(1, dtype=torch.int64), positive.cumsum(0)])
    # Rows the walks never read may be malformed: only well-formed ones can be dead ends.
    row_start, row_end = indptr[:-1], indptr[1:]
    readable = (row_start >= 0) & (row_start <= row_end) & (row_end <= num_edges)
    drawable = (
        positive_before[row_end.clamp(0, num_edges)]
        > positive_before[row_start.clamp(0, num_edges)]
    )
    alive = current >= 0
    if bool((following[~alive] != -1).any() | (slots[~alive] != -1).any()):
        return "an ended walk goes on"
    moved = slots >= 0
    at = current.clamp(0, max(num_nodes - 1, 0))
    slot = slots.clamp(0, max(num_edges - 1, 0))
    in_row = (indptr[at] <= slots) & (slots < indptr[at + 1])
    if bool((moved & ~(alive & in_row)).any()):
        return "a move takes a slot outside the current node's row"
    if num_edges and bool((moved & (indices[slot].to(torch.int64) != following)).any()):
        return "a move does not go to its slot's target"
    if num_edges and bool((moved & ~positive[slot].bool()).any()):
        return "a move takes a zero-weight slot"
    dead_end, at_start = readable[at] & ~drawable[at], current == nodes[:, :1]
    teleport = alive & ~moved & (following >= 0)
    may_teleport = ppr & ((restart_prob > 0) | (dead_end & ~at_start)) & (following == nodes[:, :1])
    if bool((teleport & ~may_teleport).any()):
        return "a teleport that is not ppr's, or not to the walk's start"
    stop = alive & ~moved & (following < 0)
    may_stop = dead_end & at_start if ppr else (restart_prob > 0) | dead_end
    return "a walk stops where it could move on" if bool((stop & ~may_stop).any()) else None


# The walks' randomness replayed in Python from docs/contracts.md, independently of the kernels:
# Philox-4x32-10 (the generator of csrc/common/philox.h, at::Philox4_32's) and the one-draw case
# of the neighbor draws, so every step of a walk, node2vec trials and fallback included, can be
# compared exactly.
_MASK32, _MASK64 = (1 << 32) - 1, (1 << 64) - 1


def philox_bits(key: int, stream: int, index: int) -> int:
    """Draw ``index`` (64 bits) of Philox stream ``stream`` under ``key``: block ``index // 2``
    with counter ``(block, stream)``, its first 64 bits for an even index, its last for odd."""
    key, stream, block = key & _MASK64, stream & _MASK64, index >> 1
    c0, c1, c2, c3 = block & _MASK32, block >> 32, stream & _MASK32, stream >> 32
    k0, k1 = key & _MASK32, key >> 32
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + 0x9E3779B9) & _MASK32, (k1 + 0xBB67AE85) & _MASK32
        a, b = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = (b >> 32) ^ c1 ^ k0, b & _MASK32, (a >> 32) ^ c3 ^ k1, a & _MASK32
    return (c2 << 32 | c3) if index & 1 else (c0 << 32 | c1)


def philox_open01(key: int, stream: int, index: int) -> float:
    """Draw ``index`` as a double in (0, 1): its top 52 bits plus one half, over 2^52."""
    return ((philox_bits(key, stream, index) >> 12) + 0.5) * (1.0 / 4503599627370496.0)


def draw_one_slot(key: int, stream: int, degree: int, weight: list[float] | None) -> int:
    """The offset one draw with replacement picks from a row (fanout 1, replace=True): uniform
    ``bits(0) % degree``, or weighted by one exponential spacing over two."""
    if weight is None:
        return philox_bits(key, stream, 0) % degree
    total = 0.0
    for w in weight:
        total += w
    spacing_total = 0.0 - math.log(philox_open01(key, stream, 0))
    spacing_total -= math.log(philox_open01(key, stream, 1))
    target = (0.0 - math.log(philox_open01(key, stream, 0))) / spacing_total * total
    cumulative, edge = 0.0, 0
    while edge < degree - 1 and (cumulative + weight[edge] <= target or weight[edge] <= 0):
        cumulative += weight[edge]
        edge += 1
    while weight[edge] <= 0:
        edge -= 1
    return edge


NODE2VEC_MAX_TRIALS = 16  # csrc/sampling/walk_step.h kMaxTrials
RESTART_SCALE = 1 << 53  # kRestartScale: a restart's uniform is draw 0's bits modulo 2^53


def _node2vec_offset(key, walk, row, row_weight, previous_row, previous, p, q) -> int:
    """A second-order move: rejection trials on streams (k << 40) | walk, then the enumeration."""
    max_bias = max(1 / p, 1.0, 1 / q)

    def bias(x: int) -> float:
        return 1 / p if x == previous else 1.0 if x in previous_row else 1 / q

    offset = 0
    for k in range(NODE2VEC_MAX_TRIALS):
        stream = (k << 40) | walk
        offset = draw_one_slot(key, stream, len(row), row_weight)
        level_draw = 1 if row_weight is None else 2  # the draw after the candidate's
        if philox_open01(key, stream, level_draw) * max_bias < bias(row[offset]):
            return offset
    terms = [
        (bias(x) / max_bias) * (1.0 if row_weight is None else row_weight[i])
        for i, x in enumerate(row)
    ]
    total = 0.0
    for term in terms:
        total += term
    share = philox_open01(key, (NODE2VEC_MAX_TRIALS << 40) | walk, 0) * total
    cumulative = 0.0
    for i, term in enumerate(terms):
        if term > 0:
            offset, cumulative = i, cumulative + term
            if cumulative > share:
                break
    return offset


def random_walk_reference(
    indptr: Tensor,
    indices: Tensor,
    weight: Tensor | None,
    starts: Tensor,
    length: int,
    seed: int,
    *,
    p: float = 1.0,
    q: float = 1.0,
    restart_prob: float = 0.0,
    ppr: bool = False,
) -> tuple[Tensor, Tensor]:
    """``fastgl::random_walk``'s ``(nodes, slots)`` replayed draw for draw from the randomness
    contract (docs/contracts.md) over an out-edge CSR with sorted rows, in plain Python."""
    indptr_, indices_ = indptr.tolist(), indices.tolist()
    weight_ = None if weight is None else weight.double().tolist()
    all_nodes, all_slots = [], []
    for walk, start in enumerate(starts.tolist()):
        path, slots = [start], []
        for t in range(length):
            current, slot, following = path[-1], -1, -1
            restarts = (
                current >= 0
                and restart_prob > 0
                and philox_bits(hop_key(seed, 2 * t + 1), walk, 0) % RESTART_SCALE
                < restart_prob * RESTART_SCALE
            )
            if restarts:
                following = start if ppr else -1
            elif current >= 0:
                lo, hi = indptr_[current], indptr_[current + 1]
                row, row_weight = indices_[lo:hi], None if weight_ is None else weight_[lo:hi]
                drawable = len(row) if row_weight is None else sum(w > 0 for w in row_weight)
                previous = path[-2] if t > 0 and slots[-1] >= 0 else None
                key = hop_key(seed, 2 * t)
                if drawable == 0:
                    following = start if ppr and current != start else -1
                elif previous is not None and (p != 1 or q != 1):
                    previous_row = set(indices_[indptr_[previous] : indptr_[previous + 1]])
                    offset = _node2vec_offset(
                        key, walk, row, row_weight, previous_row, previous, p, q
                    )
                    slot, following = lo + offset, row[offset]
                else:
                    offset = draw_one_slot(key, walk, len(row), row_weight)
                    slot, following = lo + offset, row[offset]
            path.append(following)
            slots.append(slot)
        all_nodes.append(path)
        all_slots.append(slots)
    return (
        torch.tensor(all_nodes, dtype=torch.int64).view(-1, length + 1),
        torch.tensor(all_slots, dtype=torch.int64).view(-1, length),
    )


# ---------------------------------------------------------------------------------------------
# Temporal sampling (PyG's time_attr semantics)
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Frontier sampling (Zeng et al.'s Dashboard), replayed draw for draw
# ---------------------------------------------------------------------------------------------


def frontier_sample_reference(
    indptr,
    indices,
    num_subgraphs,
    frontier_size,
    budget,
    eta,
    max_entries,
    pop,
    seed,
    entry_weight=0,
):
    """``fastgl::frontier_sample``'s ``(frontier, popped, added)`` in plain Python: the same
    Philox draws (stream = subgraph) and the same Dashboard, so that its probes land on the same
    walkers: Floyd's distinct first frontier (draws 0 .. m-1), then per move uniform probes below
    the fill mark until a live entry keeps its walker (a block's last entry, holding ``r <
    entry_weight`` units, only when one more draw below ``entry_weight`` falls below ``r``), and
    a uniform in-neighbor. A walker of weight ``w`` has ``ceil(w / entry_weight)`` entries;
    ``entry_weight`` 0 is the mean weight, truncated, in [1, 1024]; at most ``max_entries``
    when capped. DB starts at ``ceil(eta * m * max(mean weight / entry_weight, 1))``; live blocks
    are compacted to its front when an added block would pass its end (then, smaller than
    ``ceil(eta * (live + added entries))``, it grows to that, at least doubling) and before a pop
    whose fill mark exceeds ``eta`` times the live entries. ``pop="scan"``: one draw below the
    walkers' total weight, the first walker whose running sum passes it, whose slot the added
    vertex takes."""
    ptr, nbr, m = indptr.tolist(), indices.tolist(), frontier_size
    num_nodes = len(ptr) - 1
    entries = [min(d, max_entries) if max_entries > 0 else d for d in indptr.diff().tolist()]
    mean = len(nbr) / num_nodes
    if max_entries > 0:
        mean = min(mean, max_entries)
    unit = entry_weight if entry_weight > 0 else min(max(1, int(mean)), 1024)
    if max_entries > 0:
        unit = min(unit, max_entries)
    capacity = math.ceil(eta * m * max(mean / unit, 1.0))
    if pop == "scan":
        unit = 1  # the scan sums weights: its "entries" count units
    moves = budget - m
    frontiers, pops, adds = [], [], []
    for s in range(num_subgraphs):
        key = seed & _MASK64

        def below(index, bound, s=s, key=key):
            return philox_bits(key, s, index) % bound

        first = []
        for j in range(m):
            upper = num_nodes - m + j
            pick = below(j, upper + 1)
            first.append(upper if pick in first else pick)
        dashboard = _ReferenceDashboard(capacity, unit, eta)
        for v in first:
            dashboard.add(v, entries[v])
        walkers = list(first)
        draw, popped, added = m, [], []
        for _ in range(moves):
            if dashboard.live == 0:
                break
            if pop == "scan":
                share, walker = below(draw, dashboard.live), 0
                draw += 1
                while share >= entries[walkers[walker]]:
                    share -= entries[walkers[walker]]
                    walker += 1
                u = walkers[walker]
                dashboard.live -= entries[u]
            else:
                if dashboard.fill > eta * dashboard.live:
                    dashboard.cleanup(0)
                while True:
                    at = below(draw, dashboard.fill)
                    block = dashboard.db[at]
                    draw += 1
                    if block < 0:
                        continue
                    _, start, size, weight = dashboard.blocks[block]
                    rest = weight - (size - 1) * unit
                    if at == start + size - 1 and rest < unit:
                        draw += 1
                        if below(draw - 1, unit) >= rest:
                            continue
                    break
                u = dashboard.pop(block)
            v = nbr[ptr[u] + below(draw, ptr[u + 1] - ptr[u])]
            draw += 1
            if pop == "scan":
                walkers[walker] = v
                dashboard.live += entries[v]
            else:
                dashboard.add(v, entries[v])
            popped.append(u)
            added.append(v)
        frontiers.append(first)
        pops.append(popped + [-1] * (moves - len(popped)))
        adds.append(added + [-1] * (moves - len(added)))
    as_tensor = lambda rows, width: torch.tensor(rows, dtype=torch.int64).view(  # noqa: E731
        num_subgraphs, width
    )
    return as_tensor(frontiers, m), as_tensor(pops, moves), as_tensor(adds, moves)


def multirw_moves_distribution(indptr, indices, frontier, moves, max_entries=0):
    """The exact distribution of a multidimensional random walk's first ``moves`` moves from
    the walkers ``frontier`` (a list of vertices): ``{((popped, added), ...): probability}``. A
    move picks a walker with probability proportional to its vertex's in-degree (at most
    ``max_entries`` when > 0), then one of its in-edges uniformly, by enumeration of both; once
    no walker can move, the moves are ``(-1, -1)``."""
    ptr, nbr = indptr.tolist(), indices.tolist()

    def entries(v):
        degree = ptr[v + 1] - ptr[v]
        return min(degree, max_entries) if max_entries > 0 else degree

    outcomes: dict[tuple, float] = {}

    def extend(walkers, prefix, probability):
        if len(prefix) == moves:
            outcomes[prefix] = outcomes.get(prefix, 0.0) + probability
            return
        total = sum(entries(v) for v in walkers)
        if total == 0:
            extend(walkers, prefix + ((-1, -1),), probability)
            return
        for i, v in enumerate(walkers):
            row = nbr[ptr[v] : ptr[v + 1]]
            for u in row if entries(v) else ():
                moved = walkers[:i] + [u] + walkers[i + 1 :]
                extend(moved, prefix + ((v, u),), probability * entries(v) / total / len(row))

    extend(list(frontier), (), 1.0)
    return outcomes


class _ReferenceDashboard:
    """DB: per entry its block (-1: invalid); blocks: ``[vertex (-1 once popped), start, size,
    weight]``, ``ceil(weight / unit)`` entries each."""

    def __init__(self, capacity, unit, eta):
        self.db, self.blocks, self.fill, self.live = [-1] * capacity, [], 0, 0
        self.unit, self.eta = unit, eta

    def add(self, vertex, weight):
        if weight == 0:
            return
        size = -(-weight // self.unit)
        if self.fill + size > len(self.db):
            self.cleanup(size)
        self.db[self.fill : self.fill + size] = [len(self.blocks)] * size
        self.blocks.append([vertex, self.fill, size, weight])
        self.fill += size
        self.live += size

    def pop(self, block):
        vertex, start, size, _ = self.blocks[block]
        self.db[start : start + size] = [-1] * size
        self.blocks[block][0] = -1
        self.live -= size
        return vertex

    def cleanup(self, room):
        kept = [b for b in self.blocks if b[0] >= 0]
        self.db = [-1] * len(self.db)
        self.fill = 0
        for index, block in enumerate(kept):
            block[1] = self.fill
            self.db[self.fill : self.fill + block[2]] = [index] * block[2]
            self.fill += block[2]
        self.blocks = kept
        needed = math.ceil(self.eta * (self.fill + room))
        if needed > len(self.db):
            self.db += [-1] * (max(needed, 2 * len(self.db)) - len(self.db))


def temporal_valid_in_edges(
    edge_index: Tensor,
    target: int,
    seed_time,
    node_time: Tensor | None = None,
    edge_time: Tensor | None = None,
) -> list[int]:
    """Edge ids of ``target``'s in-edges that a tree with ``seed_time`` may draw
    (``node_time[source] <= seed_time`` or ``edge_time[edge] <= seed_time``), from the oldest to
    the most recent; ties in time by edge id (the later edge is the more recent)."""
    return _TemporalEdges(edge_index, node_time, edge_time).valid(target, seed_time)


class _TemporalEdges:
    """Every node's in-edges with their times, listed once (not per target and tree)."""

    def __init__(self, edge_index: Tensor, node_time: Tensor | None, edge_time: Tensor | None):
        src, dst = edge_index[0].tolist(), edge_index[1].tolist()
        times = node_time.tolist() if node_time is not None else edge_time.tolist()
        self.in_edges: dict[int, list[tuple]] = {}
        for e, (u, v) in enumerate(zip(src, dst)):
            t = times[u] if node_time is not None else times[e]
            self.in_edges.setdefault(v, []).append((t, e))

    def valid(self, target: int, seed_time) -> list[int]:
        return [e for t, e in sorted(self.in_edges.get(target, [])) if t <= seed_time]


def check_temporal_sample(
    sub,
    edge_index: Tensor,
    seeds: Tensor,
    seed_time: Tensor,
    fanouts: Sequence[int],
    strategy: str,
    replace: bool,
    node_time: Tensor | None = None,
    edge_time: Tensor | None = None,
) -> None:
    """Asserts that ``sub`` is a valid temporal sample: one tree per seed (``batch``), every
    edge inside one tree and not in its future, each target drawing as the fanout says from its
    valid in-edges only (``"last"``: exactly the most recent ones, oldest first), the nodes in
    hop-by-hop first-occurrence order per tree, and the blocks of the layout."""
    edge_index = edge_index.cpu().to(torch.int64)
    src_of, dst_of = edge_index[0], edge_index[1]
    nodes, row, col, eid = (t.cpu() for t in (sub.nodes, sub.row, sub.col, sub.eid))
    batch = sub.batch.cpu()
    seeds, seed_time = seeds.cpu().to(torch.int64), seed_time.cpu()
    node_time = None if node_time is None else node_time.cpu()
    edge_time = None if edge_time is None else edge_time.cpu()
    num_trees = seeds.numel()
    assert len(sub.num_sampled_nodes) == len(fanouts) + 1
    assert len(sub.num_sampled_edges) == len(fanouts)
    assert sum(sub.num_sampled_nodes) == nodes.numel() == batch.numel()
    assert sum(sub.num_sampled_edges) == eid.numel() == row.numel() == col.numel()
    assert sub.num_sampled_nodes[0] == num_trees, "every seed is a tree of its own"
    assert nodes[:num_trees].tolist() == seeds.tolist()
    assert batch[:num_trees].tolist() == list(range(num_trees))
    assert sub.seed_index.cpu().tolist() == list(range(num_trees))
    # Rebuild the sample hop by hop from the edges and check every draw on the way.
    keys = [(b, int(s)) for b, s in enumerate(seeds.tolist())]
    position = {k: i for i, k in enumerate(keys)}
    edges = _TemporalEdges(edge_index, node_time, edge_time)
    begin, end, edge = 0, num_trees, 0
    for hop, fanout in enumerate(fanouts):
        hop_end = edge + sub.num_sampled_edges[hop]
        hop_col = col[edge:hop_end].tolist()
        assert hop_col == sorted(hop_col), f"hop {hop + 1}: edges not grouped by target in order"
        drawn_by = {}
        for j in range(edge, hop_end):
            drawn_by.setdefault(hop_col[j - edge], []).append(int(eid[j]))
        for target in range(begin, end):
            tree, node = keys[target]
            drawn = drawn_by.pop(target, [])
            valid = edges.valid(node, float(seed_time[tree]))
            assert set(drawn) <= set(valid), (
                f"hop {hop + 1}: tree {tree} (time {float(seed_time[tree])}) drew an in-edge of "
                f"node {node} from its future: {sorted(set(drawn) - set(valid))}"
            )
            if strategy == "last":
                want = valid if fanout < 0 else valid[len(valid) - min(fanout, len(valid)) :]
                assert drawn == want, f"hop {hop + 1}: 'last' drew {drawn}, expected {want}"
            else:
                count = int(expected_draws(torch.tensor([len(valid)]), fanout, replace)[0])
                assert len(drawn) == count, f"hop {hop + 1}: {len(drawn)} draws, not {count}"
                if not replace or fanout < 0:
                    assert len(set(drawn)) == len(drawn), f"hop {hop + 1}: an edge drawn twice"
        assert not drawn_by, f"hop {hop + 1}: an edge targets a node not new at hop {hop}"
        for j in range(edge, hop_end):
            tree = keys[hop_col[j - edge]][0]
            key = (tree, int(src_of[int(eid[j])]))
            if key not in position:
                position[key] = len(keys)
                keys.append(key)
            assert int(row[j]) == position[key], f"hop {hop + 1}: row of edge {j}"
            assert int(dst_of[int(eid[j])]) == keys[hop_col[j - edge]][1]
        assert sub.num_sampled_nodes[hop + 1] == len(keys) - end, f"hop {hop + 1}: node count"
        begin, end, edge = end, len(keys), hop_end
    assert [(int(b), int(v)) for b, v in zip(batch, nodes)] == keys, "nodes out of order"
    check_blocks(sub, edge_index)


# ---------------------------------------------------------------------------------------------
# Aggregation details: ES-SpMM's picked edges, the edge softmax, the transit schedule
# ---------------------------------------------------------------------------------------------


def picked_slots(degree, width, strategy):
    """The paper's rule, written independently: positions within a row that ES-SpMM reads."""
    if degree <= width:
        return list(range(degree))
    if strategy == "bucket":
        return list(range(width))
    return [(j * 577) % degree for j in range(width)]


def reference_edge_softmax(dst, num_dst, scores):
    """Per-destination softmax with scatter ops; scores [E, H]."""
    index = dst.unsqueeze(1).expand_as(scores)
    largest = torch.full((num_dst, scores.shape[1]), -torch.inf, dtype=scores.dtype)
    largest = largest.scatter_reduce(0, index, scores, "amax")
    exps = (scores - largest[dst]).exp()
    total = torch.zeros(num_dst, scores.shape[1], dtype=scores.dtype).index_add_(0, dst, exps)
    return exps / total[dst]


def transit_schedule_reference(transits, min_block_pairs, chunk_size):
    """NextDoor's schedule of (sample, transit) pairs, from lists: ``(order, segment transits,
    segment starts, thread-tier positions, block-tier (segment, chunk) items)``."""
    order = sorted(range(len(transits)), key=lambda p: (transits[p], p))  # stable by transit
    counts = Counter(transits)
    segments = sorted(counts)
    starts = [0]
    for t in segments:
        starts.append(starts[-1] + counts[t])
    thread_tier = [i for i, p in enumerate(order) if counts[transits[p]] < min_block_pairs]
    items = [
        (s, c)
        for s, t in enumerate(segments)
        if counts[t] >= min_block_pairs
        for c in range(-(-counts[t] // chunk_size))
    ]
    return order, segments, starts, thread_tier, items


CHI_SQUARE_P_MIN = 1e-3  # the samplers' tests draw from fixed seeds: deterministic, not flaky


def assert_chi_square_fits(observed, expected, what: str, ddof: int = 0) -> None:
    """The counts ``observed`` fit the distribution proportional to ``expected`` (chi-square,
    p > CHI_SQUARE_P_MIN); at least 5 expected samples per cell. Several distributions tested
    at once (cells of G groups, each group's expected counts summing to its observed total)
    pass ``ddof=G - 1``: one degree of freedom less per group total fixed beyond the first."""
    observed = torch.as_tensor(observed, dtype=torch.float64)
    expected = torch.as_tensor(expected, dtype=torch.float64)
    expected = expected * observed.sum() / expected.sum()
    assert float(expected.min()) >= 5, "too few samples per cell for chi-square"
    p = chisquare(observed.numpy(), expected.numpy(), ddof=ddof).pvalue
    assert p > CHI_SQUARE_P_MIN, (
        f"{what}: chi-square p = {p:.2e}; observed {observed.tolist()}, "
        f"expected {[round(x, 1) for x in expected.tolist()]}"
    )
