"""Drop-ins for the GNN libraries users already have.

* :mod:`fastgl.integrations.dgl`: a ``dgl.dataloading`` neighbor sampler and DGL-signature conv
  layers (needs DGL, which supports torch up to 2.2-2.4).
* :mod:`fastgl.integrations.pyg`: ``NeighborLoader``, ``LinkNeighborLoader`` and a
  ``torch_geometric.sampler.NeighborSampler`` that work without ``pyg-lib``/``torch-sparse``, and
  the conv layers under PyG's names.

Each submodule imports its library on import; ``fastgl`` itself never does.
"""
