"""The PyG drop-in samples on the GPU when the data lives there, with the CPU's results."""

import torch
from torch_geometric.data import Data

from fastgl.integrations.pyg import NeighborLoader


def test_gpu_data_is_sampled_on_the_gpu_like_on_the_cpu():
    generator = torch.Generator().manual_seed(0)
    edge_index = torch.randint(0, 500, (2, 5000), generator=generator)
    data = Data(x=torch.randn(500, 8, generator=generator), edge_index=edge_index)
    batches = {}
    for device in ("cpu", "cuda"):
        torch.manual_seed(4)
        torch.cuda.manual_seed(4)
        loader = NeighborLoader(
            data.to(device), [5, 5], batch_size=64, input_nodes=torch.arange(0, 500, 2)
        )
        batches[device] = list(loader)
    for cpu, gpu in zip(batches["cpu"], batches["cuda"]):
        assert gpu.edge_index.is_cuda and gpu.n_id.is_cuda
        assert torch.equal(edge_index[:, gpu.e_id.cpu()], gpu.n_id[gpu.edge_index].cpu())
        assert gpu.num_sampled_nodes[0] == cpu.num_sampled_nodes[0] == gpu.batch_size
