"""fastgl's conv layers as PyG ``MessagePassing`` modules, so PyG's tools take them.

PyG recognizes graph layers by ``isinstance(module, MessagePassing)``: ``to_hetero`` duplicates
such a layer per edge type and sums its outputs per destination type (any other module is
duplicated per node type), ``get_num_hops`` / ``get_embeddings`` and the explainers count them,
``HeteroConv`` and ``to_hetero`` read their ``add_self_loops``. ``fastgl.nn``'s layers are plain
torch modules (fastgl does not require PyG), so each class here is the ``fastgl.nn`` layer of
the same name with :class:`~torch_geometric.nn.conv.MessagePassing` as a further base: the same
arguments, parameters, ``state_dict`` keys, ``forward`` and outputs (fastgl's code computes
everything), and ``isinstance(layer, MessagePassing)`` holds.

``MessagePassing.__init__`` does not run: it inspects ``message`` / ``aggregate`` / ``update``
and generates a ``propagate`` for them, none of which these layers call. What PyG reads off a
``MessagePassing`` is there instead (``flow``, ``aggr``, ``node_dim``, ``explain`` (``None``),
``decomposed_layers`` (1), ``add_self_loops`` where PyG's layer has it), and the module is a
plain torch module to ``copy.deepcopy``, pickle and ``torch.compile``.

What fastgl's fused aggregation cannot offer is refused with ``NotImplementedError`` instead of
being silently ignored: the hooks on ``propagate`` / ``message`` / ``aggregate`` (fastgl never
materializes per-edge messages; PyG's ``AttentionExplainer`` and ``to_hetero_with_bases`` use
them), explainer edge masks (``explain = True``, which PyG's explainers set for edge masks;
node-feature explanations need none), ``decomposed_layers != 1``, ``propagate`` and the other
message-passing steps, and ``jittable`` (TorchScript).

Example:
    >>> from torch_geometric.nn import MessagePassing
    >>> conv = SAGEConv((-1, -1), 16)
    >>> isinstance(conv, MessagePassing) and isinstance(conv, fastgl.nn.SAGEConv)
    True
"""

import torch
from torch_geometric.nn import MessagePassing

import fastgl.nn

__all__ = ["GATConv", "GCNConv", "GINConv", "SAGEConv"]

# MessagePassing's steps and hooks, which need the per-edge messages fastgl's kernels fuse away.
_REFUSED = (
    "propagate",
    "message",
    "aggregate",
    "message_and_aggregate",
    "update",
    "edge_updater",
    "edge_update",
    "explain_message",
    "jittable",
    *(
        f"register_{step}_forward{pre}_hook"
        for step in ("propagate", "message", "aggregate", "message_and_aggregate", "edge_update")
        for pre in ("_pre", "")
    ),
)


def _refused(name: str):
    def refuse(self, *args, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__}.{name}: fastgl's layers aggregate in fused kernels without "
            f"PyG's message-passing steps (no per-edge messages), so {name} is not supported"
        )

    refuse.__name__ = refuse.__qualname__ = name
    return refuse


class _FastGLMessagePassing(MessagePassing):
    """The base that makes a ``fastgl.nn`` layer a ``MessagePassing``: list it after the layer,
    whose ``super().__init__()`` then lands here (see the module docstring)."""

    aggr = "add"  # PyG's GCNConv, GINConv and GATConv (SAGEConv sets its own)
    node_dim = -2
    _explain = None
    _edge_mask = _loop_mask = None
    _apply_sigmoid = True

    def __init__(self) -> None:
        torch.nn.Module.__init__(self)  # not MessagePassing's: it builds unused propagate code

    # MessagePassing's __setstate__ rebuilds the inspector this module does not have.
    __setstate__ = torch.nn.Module.__setstate__

    @property
    def explain(self) -> bool | None:
        return self._explain

    @explain.setter
    def explain(self, explain: bool | None) -> None:
        if explain:
            raise NotImplementedError(
                f"{type(self).__name__}: explainer edge masks (explain=True) are not supported; "
                "fastgl's aggregation has no per-edge messages to mask"
            )
        self._explain = explain

    @property
    def decomposed_layers(self) -> int:
        return 1

    @decomposed_layers.setter
    def decomposed_layers(self, decomposed_layers: int) -> None:
        if decomposed_layers != 1:
            raise NotImplementedError(
                f"{type(self).__name__}: decomposed_layers={decomposed_layers} is not supported "
                "(it splits the per-edge messages of PyG's propagate, which fastgl never builds)"
            )


for _name in _REFUSED:
    setattr(_FastGLMessagePassing, _name, _refused(_name))


class GCNConv(fastgl.nn.GCNConv, _FastGLMessagePassing):
    """:class:`fastgl.nn.GCNConv` as a PyG ``MessagePassing`` (see the module docstring)."""


class SAGEConv(fastgl.nn.SAGEConv, _FastGLMessagePassing):
    """:class:`fastgl.nn.SAGEConv` as a PyG ``MessagePassing`` (see the module docstring)."""


class GINConv(fastgl.nn.GINConv, _FastGLMessagePassing):
    """:class:`fastgl.nn.GINConv` as a PyG ``MessagePassing`` (see the module docstring)."""


class GATConv(fastgl.nn.GATConv, _FastGLMessagePassing):
    """:class:`fastgl.nn.GATConv` as a PyG ``MessagePassing`` (see the module docstring)."""

    node_dim = 0  # as PyG's GATConv
