"""PyG's ``NeighborLoader`` and ``LinkNeighborLoader`` with fastgl's sampler plugged in.

They are PyG's own loader classes (same arguments, same batches, ``transform``, workers,
negative sampling) whose default sampler is :class:`fastgl.integrations.pyg.NeighborSampler`,
so they work where ``pyg-lib`` and ``torch-sparse`` are not installed. ``data`` is a ``Data``
or a ``HeteroData`` (with or without edges) or PyG's remote-backend pair ``(FeatureStore,
GraphStore)``; ``time_attr`` samples temporally.
"""

import torch_geometric.loader

from .sampler import NeighborSampler


def _sampler_or_fastgl(
    neighbor_sampler, data, num_neighbors, sampling: dict, loader_kwargs, pyg_rejects: bool
):
    """The caller's sampler, or fastgl's built from the sampling arguments PyG would use. Where
    PyG's loader rejects the arguments before it builds a sampler (``pyg_rejects``), none is
    built, so that PyG's own error is the one raised."""
    if neighbor_sampler is not None or pyg_rejects:
        return neighbor_sampler
    return NeighborSampler(
        data, num_neighbors, **sampling, share_memory=loader_kwargs.get("num_workers", 0) > 0
    )


class NeighborLoader(torch_geometric.loader.NeighborLoader):
    """``torch_geometric.loader.NeighborLoader`` sampling with fastgl (same signature).

    Every batch is a ``Data`` with PyG's layout: ``n_id`` (seeds first), ``e_id``, ``input_id``,
    ``batch_size``, ``num_sampled_nodes``, ``num_sampled_edges``, ``edge_index[0]`` = neighbor,
    edges grouped by hop (so ``trim_to_layer`` works). Samples on the GPU when ``data`` is there.
    A graph without edges gives batches of the seeds alone. For a ``(FeatureStore, GraphStore)``
    pair, fastgl samples the graph store's edges and PyG's loader fetches the batch's node
    features from the feature store (``input_nodes`` is then required, as in PyG).

    A ``HeteroData`` gives ``HeteroData`` batches: ``n_id`` and ``num_sampled_nodes`` per node
    type, ``e_id`` and ``num_sampled_edges`` per edge type, ``input_id`` and ``batch_size`` on
    the input type; ``num_neighbors`` is one list for every edge type or a dict per edge type.
    With ``time_attr``, every seed grows its own tree (``batch``) from neighbors no later than
    its time: ``input_time``, or its own node time (for ``HeteroData``, node or edge types
    without the attribute are not constrained, as in PyG).

    Example:
        >>> import torch
        >>> from torch_geometric.data import Data
        >>> from fastgl.integrations.pyg import NeighborLoader   # the only changed line
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> data = Data(x=torch.randn(4, 8), edge_index=edge_index)
        >>> loader = NeighborLoader(data, num_neighbors=[2, 2], batch_size=2, shuffle=True)
        >>> for batch in loader:
        ...     assert batch.x.shape[0] == batch.num_nodes   # model(batch.x, batch.edge_index)
        >>> batch = next(iter(NeighborLoader(Data(num_nodes=5), [2], batch_size=3)))
        >>> batch.n_id, batch.num_sampled_edges   # no edges: the seeds alone
        (tensor([0, 1, 2]), [0])

        Heterogeneous, with a fanout per edge type:

        >>> from torch_geometric.data import HeteroData
        >>> hetero = HeteroData()
        >>> hetero["paper"].x, hetero["author"].x = torch.randn(3, 4), torch.randn(2, 4)
        >>> hetero["author", "writes", "paper"].edge_index = torch.tensor([[0, 1, 1], [0, 0, 2]])
        >>> hetero["paper", "cites", "paper"].edge_index = torch.tensor([[1, 2], [0, 0]])
        >>> fanouts = {("author", "writes", "paper"): [2], ("paper", "cites", "paper"): [0]}
        >>> loader = NeighborLoader(hetero, fanouts, input_nodes=("paper", torch.tensor([0])))
        >>> batch = next(iter(loader))
        >>> batch["paper"].n_id, batch["author"].n_id, batch["paper"].batch_size
        (tensor([0]), tensor([0, 1]), 1)
        >>> batch["author", "writes", "paper"].e_id, batch["paper", "cites", "paper"].e_id
        (tensor([0, 1]), tensor([], dtype=torch.int64))

        Temporal (node ``v`` at time ``t[v]``): seed 1 at time 1 sees node 0 only.

        >>> data.t = torch.tensor([0, 1, 2, 3])
        >>> loader = NeighborLoader(data, [-1], input_nodes=torch.tensor([1]), time_attr="t")
        >>> batch = next(iter(loader))
        >>> batch.n_id, batch.batch
        (tensor([1, 0]), tensor([0, 0]))
    """

    def __init__(
        self,
        data,
        num_neighbors,
        input_nodes=None,
        input_time=None,
        replace=False,
        subgraph_type="directional",
        disjoint=False,
        temporal_strategy="uniform",
        time_attr=None,
        weight_attr=None,
        transform=None,
        transform_sampler_output=None,
        is_sorted=False,
        filter_per_worker=None,
        neighbor_sampler=None,
        directed=True,
        **kwargs,
    ):
        sampling = dict(
            replace=replace,
            subgraph_type=subgraph_type,
            disjoint=disjoint,
            temporal_strategy=temporal_strategy,
            time_attr=time_attr,
            weight_attr=weight_attr,
            is_sorted=is_sorted,
            directed=directed,
        )
        super().__init__(
            data,
            num_neighbors,
            input_nodes=input_nodes,
            input_time=input_time,
            transform=transform,
            transform_sampler_output=transform_sampler_output,
            filter_per_worker=filter_per_worker,
            neighbor_sampler=_sampler_or_fastgl(
                neighbor_sampler,
                data,
                num_neighbors,
                sampling,
                kwargs,
                pyg_rejects=input_time is not None and time_attr is None,
            ),
            **sampling,
            **kwargs,
        )


class LinkNeighborLoader(torch_geometric.loader.LinkNeighborLoader):
    """``torch_geometric.loader.LinkNeighborLoader`` sampling with fastgl (same signature):
    seed edges ``edge_label_index``, optional binary or triplet ``neg_sampling``. With a
    ``(FeatureStore, GraphStore)`` pair, pass ``edge_label_index=(None, tensor)`` as in PyG; with
    a ``HeteroData``, ``edge_label_index=(edge_type, tensor)``. Temporal: ``time_attr`` and
    ``edge_label_time`` together (PyG raises its own error for one alone); both endpoints of a
    seed edge, and its negatives, sample as of the edge's time, and negatives drawn with node
    times are nodes that exist by then, as in PyG.

    Example:
        >>> import torch
        >>> from torch_geometric.data import Data
        >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
        >>> data = Data(x=torch.randn(4, 8), edge_index=edge_index)
        >>> loader = LinkNeighborLoader(data, [2, 1], edge_label_index=data.edge_index,
        ...                             neg_sampling="binary", batch_size=2)
        >>> batch = next(iter(loader))
        >>> batch.edge_label   # two positive seed edges, two sampled negatives
        tensor([1., 1., 0., 0.])

        Temporal: seed edge ``2 -> 1`` at time 1; each endpoint grows a tree of nodes no later
        than 1 (node 1 twice: in 2's tree and as the root of its own), ``batch`` names the seed
        edge.

        >>> data.t = torch.tensor([0, 1, 2, 3])
        >>> loader = LinkNeighborLoader(data, [-1], edge_label_index=edge_index[:, 3:4],
        ...                             edge_label_time=torch.tensor([1]), time_attr="t")
        >>> batch = next(iter(loader))
        >>> batch.n_id, batch.batch, batch.edge_label_index
        (tensor([2, 1, 1, 0]), tensor([0, 0, 0, 0]), tensor([[0],
                [1]]))
    """

    def __init__(
        self,
        data,
        num_neighbors,
        edge_label_index=None,
        edge_label=None,
        edge_label_time=None,
        replace=False,
        subgraph_type="directional",
        disjoint=False,
        temporal_strategy="uniform",
        neg_sampling=None,
        neg_sampling_ratio=None,
        time_attr=None,
        weight_attr=None,
        transform=None,
        transform_sampler_output=None,
        is_sorted=False,
        filter_per_worker=None,
        neighbor_sampler=None,
        directed=True,
        **kwargs,
    ):
        sampling = dict(
            replace=replace,
            subgraph_type=subgraph_type,
            disjoint=disjoint,
            temporal_strategy=temporal_strategy,
            time_attr=time_attr,
            weight_attr=weight_attr,
            is_sorted=is_sorted,
            directed=directed,
        )
        super().__init__(
            data,
            num_neighbors,
            edge_label_index=edge_label_index,
            edge_label=edge_label,
            edge_label_time=edge_label_time,
            neg_sampling=neg_sampling,
            neg_sampling_ratio=neg_sampling_ratio,
            transform=transform,
            transform_sampler_output=transform_sampler_output,
            filter_per_worker=filter_per_worker,
            neighbor_sampler=_sampler_or_fastgl(
                neighbor_sampler,
                data,
                num_neighbors,
                sampling,
                kwargs,
                pyg_rejects=(edge_label_time is None) != (time_attr is None),
            ),
            **sampling,
            **kwargs,
        )
