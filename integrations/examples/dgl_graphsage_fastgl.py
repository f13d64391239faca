"""GraphSAGE node classification with DGL's mini-batch API (the shape of DGL's own
``examples/pytorch/graphsage/node_classification.py``), on Cora.

Two versions that differ by their import lines only: ``dgl_graphsage.py`` (DGL's sampler and
layers) and ``dgl_graphsage_fastgl.py`` (fastgl's drop-ins). Run either in an environment with
DGL:

    python dgl_graphsage_fastgl.py --root DIR_WITH_ind.cora.*
"""

import dgl
import torch
import torch.nn as nn
import torch.nn.functional as F
from dgl.dataloading import DataLoader

from fastgl.integrations.dgl import MultiLayerFullNeighborSampler, NeighborSampler, SAGEConv

from cora import example_arguments, load_cora


class SAGE(nn.Module):
    def __init__(self, in_size, hid_size, out_size):
        super().__init__()
        self.layers = nn.ModuleList(
            [SAGEConv(in_size, hid_size, "mean"), SAGEConv(hid_size, out_size, "mean")]
        )
        self.dropout = nn.Dropout(0.5)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


def evaluate(model, g, nids):
    model.eval()
    sampler = MultiLayerFullNeighborSampler(
        2, prefetch_node_feats=["feat"], prefetch_labels=["label"]
    )
    loader = DataLoader(g, nids, sampler, batch_size=4096)
    correct = 0
    with torch.no_grad():
        for input_nodes, output_nodes, blocks in loader:
            logits = model(blocks, blocks[0].srcdata["feat"])
            correct += int((logits.argmax(1) == blocks[-1].dstdata["label"]).sum())
    return correct / len(nids)


def train(model, g, train_idx, val_idx, epochs):
    sampler = NeighborSampler([10, 10], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = DataLoader(g, train_idx, sampler, batch_size=512, shuffle=True, drop_last=False)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    for epoch in range(epochs):
        model.train()
        total_loss = 0.0
        for input_nodes, output_nodes, blocks in loader:
            logits = model(blocks, blocks[0].srcdata["feat"])
            loss = F.cross_entropy(logits, blocks[-1].dstdata["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item()
        if (epoch + 1) % 10 == 0:
            print(
                f"epoch {epoch + 1:3d} | loss {total_loss:.4f} | "
                f"val accuracy {evaluate(model, g, val_idx):.4f}"
            )


def main():
    args = example_arguments(__doc__)
    torch.manual_seed(args.seed)
    edge_index, x, y, train_idx, val_idx, test_idx, num_classes = load_cora(args.root)
    g = dgl.graph((edge_index[0], edge_index[1]), num_nodes=x.shape[0])
    g.ndata["feat"], g.ndata["label"] = x, y
    model = SAGE(x.shape[1], 64, num_classes)
    train(model, g, train_idx, val_idx, args.epochs)
    print(f"test accuracy {evaluate(model, g, test_idx):.4f}")


if __name__ == "__main__":
    main()
