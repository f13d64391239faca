"""GraphSAGE node classification with PyG's ``NeighborLoader`` (the shape of PyG's own
``examples/reddit.py``: mini-batch training, layer-wise full-neighborhood inference), on Cora.

Two versions that differ by their import lines only: ``pyg_graphsage.py`` (PyG's loader and
layers; its loader needs ``pyg-lib`` or ``torch-sparse``) and ``pyg_graphsage_fastgl.py``
(fastgl's drop-ins, which need neither):

    python pyg_graphsage_fastgl.py --root DIR_WITH_ind.cora.*
"""

import copy

import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from fastgl.integrations.pyg import NeighborLoader, SAGEConv

from cora import example_arguments, load_cora


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.convs = torch.nn.ModuleList(
            [SAGEConv(in_channels, hidden_channels), SAGEConv(hidden_channels, out_channels)]
        )

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.dropout(x.relu(), p=0.5, training=self.training)
        return x

    @torch.no_grad()
    def inference(self, x_all, subgraph_loader):
        # Layer by layer over all nodes, each layer with every neighbor.
        for i, conv in enumerate(self.convs):
            xs = []
            for batch in subgraph_loader:
                x = conv(x_all[batch.n_id], batch.edge_index)
                if i < len(self.convs) - 1:
                    x = x.relu()
                xs.append(x[: batch.batch_size])
            x_all = torch.cat(xs, dim=0)
        return x_all


def main():
    args = example_arguments(__doc__)
    torch.manual_seed(args.seed)
    edge_index, x, y, train_idx, val_idx, test_idx, num_classes = load_cora(args.root)
    data = Data(x=x, y=y, edge_index=edge_index)
    train_loader = NeighborLoader(
        data, input_nodes=train_idx, num_neighbors=[10, 10], batch_size=512, shuffle=True
    )
    subgraph_loader = NeighborLoader(
        copy.copy(data), input_nodes=None, num_neighbors=[-1], batch_size=4096, shuffle=False
    )

    model = SAGE(data.num_features, 64, num_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        total_loss = 0.0
        for batch in train_loader:
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
            loss = F.cross_entropy(out, batch.y[: batch.batch_size])
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        if (epoch + 1) % 10 == 0:
            model.eval()
            pred = model.inference(data.x, subgraph_loader).argmax(dim=-1)
            val = float((pred[val_idx] == data.y[val_idx]).float().mean())
            print(f"epoch {epoch + 1:3d} | loss {total_loss:.4f} | val accuracy {val:.4f}")

    model.eval()
    pred = model.inference(data.x, subgraph_loader).argmax(dim=-1)
    print(f"test accuracy {float((pred[test_idx] == data.y[test_idx]).float().mean()):.4f}")


if __name__ == "__main__":
    main()
