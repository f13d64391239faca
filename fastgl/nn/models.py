"""GNN models on the FastGLConv layers: GraphSAGE, GCN, GIN and GAT.

Each model stacks ``num_layers`` convolutions like PyG's model of the same name
(``torch_geometric.nn.models``; same ``convs.*`` ``state_dict`` keys, so PyG checkpoints load),
with the activation and dropout between layers and none after the last. ``forward(x, blocks)``
runs layer ``i`` on ``blocks[i]`` (input layer first, as :attr:`SampledSubgraph.blocks` holds
them) and returns one row per seed; ``forward(x, edge_index)`` (or a CSCGraph) runs every layer on
the full graph. ``forward(..., approx=ESSpMM(width=16))`` runs inference with ES-SpMM.

Example:
    >>> import fastgl
    >>> edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 1, 1]])
    >>> graph = fastgl.CSCGraph.from_edge_index(edge_index)
    >>> x, seeds = torch.randn(4, 128), torch.tensor([1, 2])
    >>> sub = fastgl.NeighborSampler(graph, [10, 5]).sample(seeds)
    >>> model = GraphSAGE(128, 256, num_layers=2, out_channels=47)
    >>> logits = model(x[sub.nodes], sub.blocks)      # [len(seeds), 47]
    >>> logits.shape
    torch.Size([2, 47])
"""

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from fastgl.graph import Block, CSCGraph, check_ids

from .approx import ESSpMM
from .conv import GATConv, GCNConv, GINConv, SAGEConv, _Linear

Graph = Tensor | CSCGraph | Sequence[Block]

__all__ = ["GAT", "GCN", "GIN", "GraphSAGE"]

_ACTIVATIONS = {
    "relu": torch.nn.ReLU,
    "elu": torch.nn.ELU,
    "leaky_relu": torch.nn.LeakyReLU,
    "gelu": torch.nn.GELU,
    "tanh": torch.nn.Tanh,
    "sigmoid": torch.nn.Sigmoid,
    "silu": torch.nn.SiLU,
    "prelu": torch.nn.PReLU,
}


def _activation(act: str | Callable | type | None) -> Callable | None:
    """``"relu"`` (etc.), a module class (instantiated), a callable, or ``None``."""
    if act is None or callable(act) and not isinstance(act, type):
        return act
    if isinstance(act, type) and issubclass(act, torch.nn.Module):
        return act()
    if isinstance(act, str) and act.lower() in _ACTIVATIONS:
        return _ACTIVATIONS[act.lower()]()
    raise ValueError(
        f"unknown activation {act!r}; use one of {sorted(_ACTIVATIONS)}, a module "
        f"class or a callable"
    )


class BasicGNN(torch.nn.Module):
    """A stack of ``num_layers`` convolutions with activation and dropout between them.

    Args:
        in_channels: input features.
        hidden_channels: features of the hidden layers.
        num_layers: number of convolutions (= number of blocks to pass).
        out_channels: output features (``None``: ``hidden_channels``).
        dropout: dropout probability after each hidden layer.
        act: activation after each hidden layer (``"relu"``, a module class, a callable or
            ``None``).
        **kwargs: passed to every convolution.
    """

    supports_edge_weight = False

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        num_layers: int,
        out_channels: int | None = None,
        dropout: float = 0.0,
        act: str | Callable | type | None = "relu",
        **kwargs,
    ) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"{type(self).__name__}: num_layers must be >= 1, got {num_layers}")
        self.in_channels = in_channels
        self.hidden_channels = hidden_channels
        self.num_layers = num_layers
        self.out_channels = hidden_channels if out_channels is None else out_channels
        self.dropout = torch.nn.Dropout(p=dropout)
        self.act = _activation(act)
        self.convs = torch.nn.ModuleList()
        channels = in_channels
        for _ in range(num_layers - 1):
            self.convs.append(self.init_conv(channels, hidden_channels, last=False, **kwargs))
            channels = hidden_channels
        # As PyG: a given out_channels makes the last layer the output layer.
        self.convs.append(
            self.init_conv(channels, self.out_channels, last=out_channels is not None, **kwargs)
        )

    def init_conv(
        self, in_channels: int, out_channels: int, last: bool, **kwargs
    ) -> torch.nn.Module:
        raise NotImplementedError

    def reset_parameters(self) -> None:
        for conv in self.convs:
            conv.reset_parameters()

    def forward(
        self,
        x: Tensor,
        graph: Graph,
        edge_weight: Tensor | Sequence[Tensor | None] | None = None,
        *,
        approx: ESSpMM | None = None,
    ) -> Tensor:
        """``x`` ``[num_nodes, in_channels]``; ``graph`` a list of ``num_layers`` Blocks (input
        layer first; ``x`` has ``blocks[0].num_src_nodes`` rows, the result
        ``blocks[-1].num_dst_nodes``), or a full graph (``edge_index`` or CSCGraph) for every
        layer. ``edge_weight`` (GCN only): one tensor for a full graph, one per block (or
        ``None``) for blocks. ``approx=ESSpMM(width, strategy)`` aggregates with ES-SpMM
        (inference only: under ``torch.no_grad()``)."""
        name = type(self).__name__
        if edge_weight is not None and not self.supports_edge_weight:
            raise ValueError(f"{name}: this model takes no edge_weight")
        if isinstance(graph, (list, tuple)):
            if len(graph) != self.num_layers or not all(isinstance(b, Block) for b in graph):
                raise ValueError(
                    f"{name}: expected a list of {self.num_layers} Blocks (one per "
                    f"layer), got {len(graph)} items of types "
                    f"{sorted({type(b).__name__ for b in graph})}"
                )
            layer_graphs: list = list(graph)
            if edge_weight is None:
                weights: list[Tensor | None] = [None] * self.num_layers
            elif isinstance(edge_weight, (list, tuple)) and len(edge_weight) == self.num_layers:
                weights = list(edge_weight)
            else:
                raise ValueError(
                    f"{name}: with blocks, edge_weight must be a list of "
                    f"{self.num_layers} tensors (or None), one per block"
                )
        else:
            if isinstance(graph, Tensor):
                graph = _full_graph(name, graph, x)
            elif not isinstance(graph, CSCGraph):
                raise TypeError(
                    f"{name}: graph must be a list of Blocks, an edge_index tensor or "
                    f"a CSCGraph, got {type(graph).__name__}"
                )
            layer_graphs = [graph] * self.num_layers
            weights = [edge_weight] * self.num_layers
        for i, (conv, layer_graph) in enumerate(zip(self.convs, layer_graphs)):
            if self.supports_edge_weight:
                x = conv(x, layer_graph, weights[i], approx=approx)
            else:
                x = conv(x, layer_graph, approx=approx)
            if i < self.num_layers - 1:
                if self.act is not None:
                    x = self.act(x)
                x = self.dropout(x)
        return x

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
            f"num_layers={self.num_layers})"
        )


def _full_graph(name: str, edge_index: Tensor, x: Tensor) -> CSCGraph:
    """One CSCGraph of ``edge_index`` for all layers (built once, not once per layer)."""
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(
            f"{name}: edge_index must have shape [2, E], got {tuple(edge_index.shape)}"
        )
    num_nodes = x.shape[0]  # one node per row of x
    check_ids(name, "edge_index", edge_index, num_nodes)
    return CSCGraph.from_edge_index(edge_index, num_nodes)


class GraphSAGE(BasicGNN):
    """GraphSAGE (Hamilton et al.) of :class:`~fastgl.nn.SAGEConv` layers (``aggr`` etc. via
    ``**kwargs``)."""

    def init_conv(self, in_channels, out_channels, last, **kwargs):
        return SAGEConv(in_channels, out_channels, **kwargs)


class GCN(BasicGNN):
    """GCN (Kipf & Welling) of :class:`~fastgl.nn.GCNConv` layers; on blocks each layer
    normalizes over its block (see :class:`~fastgl.nn.GCNConv`)."""

    supports_edge_weight = True

    def init_conv(self, in_channels, out_channels, last, **kwargs):
        return GCNConv(in_channels, out_channels, **kwargs)


class _MLP(torch.nn.Module):
    """``lins[-1](... act(lins[0](x)))``: PyG's ``MLP`` without norm or dropout (the GIN model's
    inner network; same ``lins.*`` keys)."""

    def __init__(self, channels: Sequence[int], act: Callable | None) -> None:
        super().__init__()
        self.act = act
        self.lins = torch.nn.ModuleList(_Linear(a, b) for a, b in zip(channels[:-1], channels[1:]))

    def reset_parameters(self) -> None:
        for lin in self.lins:
            lin.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        for lin in self.lins[:-1]:
            x = lin(x)
            if self.act is not None:
                x = self.act(x)
        return self.lins[-1](x)


class GIN(BasicGNN):
    """GIN (Xu et al.) of :class:`~fastgl.nn.GINConv` layers, each with a two-layer MLP
    ``[in, out, out]`` using the model's activation."""

    def init_conv(self, in_channels, out_channels, last, **kwargs):
        return GINConv(_MLP([in_channels, out_channels, out_channels], self.act), **kwargs)


class GAT(BasicGNN):
    """GAT (Velickovic et al.) of :class:`~fastgl.nn.GATConv` layers.

    ``heads`` (default 1) heads per layer; hidden layers concatenate ``hidden_channels // heads``
    features per head (``hidden_channels`` must be divisible by ``heads``); an output layer (when
    ``out_channels`` is given) averages ``heads`` heads of ``out_channels``. ``dropout`` also
    applies to the attention coefficients, as PyG.
    """

    def init_conv(self, in_channels, out_channels, last, **kwargs):
        if kwargs.pop("v2", False):
            raise NotImplementedError("GAT: v2=True (GATv2Conv) is not supported")
        heads = kwargs.pop("heads", 1)
        concat = kwargs.pop("concat", True) and not last
        if concat and out_channels % heads != 0:
            raise ValueError(
                f"GAT: the output channels of a concatenating GATConv "
                f"({out_channels}) must be divisible by the number of heads "
                f"({heads})"
            )
        if concat:
            out_channels //= heads
        return GATConv(
            in_channels, out_channels, heads=heads, concat=concat, dropout=self.dropout.p, **kwargs
        )
