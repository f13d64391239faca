"""PyG's ``NeighborLoader`` and ``LinkNeighborLoader`` with fastgl's sampler plugged in.

They are PyG's own loader classes (same arguments, same batches, ``transform``, workers,
negative sampling) whose default sampler is :class:`fastgl.integrations.pyg.NeighborSampler`,
so they work where ``pyg-lib`` and ``torch-sparse`` are not installed. ``data`` is a homogeneous
``Data`` (with or without edges) or PyG's remote-backend pair ``(FeatureStore, GraphStore)``.
"""

import torch_geometric.loader

from .sampler import NeighborSampler


def _sampler_or_fastgl(neighbor_sampler, data, num_neighbors, sampling: dict, loader_kwargs):
    """The caller's sampler, or fastgl's built from the sampling arguments PyG would use."""
    if neighbor_sampler is not None:
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
                neighbor_sampler, data, num_neighbors, sampling, kwargs
            ),
            **sampling,
            **kwargs,
        )


class LinkNeighborLoader(torch_geometric.loader.LinkNeighborLoader):
    """``torch_geometric.loader.LinkNeighborLoader`` sampling with fastgl (same signature):
    seed edges ``edge_label_index``, optional binary or triplet ``neg_sampling``. With a
    ``(FeatureStore, GraphStore)`` pair, pass ``edge_label_index=(None, tensor)`` as in PyG.

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
                neighbor_sampler, data, num_neighbors, sampling, kwargs
            ),
            **sampling,
            **kwargs,
        )
