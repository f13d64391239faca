"""The one random input of fastgl's samplers: a Philox key drawn from a torch generator."""

import torch


def draw_key(
    generator: torch.Generator | None, device: torch.device, where: str = "neighbor_sample"
) -> int:
    """One 62-bit Philox key from the generator of the graph's device (default: torch's); the
    compiled ops derive a key per hop from it. ``where`` names the caller in errors. On CUDA the
    key comes from the generator's host-side state, with no synchronization."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise TypeError(
            f"{where}: generator must be a torch.Generator or None, got {type(generator).__name__}"
        )
    if generator is not None and torch.device(generator.device).type != device.type:
        raise ValueError(
            f"{where}: the generator is on {generator.device} but the graph is on {device}"
        )
    if device.type == "cuda":
        key = _key_from_cuda_generator(generator, device)
        if key is not None:
            return key
    return int(torch.randint(0, 1 << 62, (1,), generator=generator, device=device))


_MASK64 = (1 << 64) - 1
# A CUDA generator's state: its seed (8 bytes), then its Philox offset (8 bytes).
_CUDA_STATE_BYTES = 16
# Philox offsets advance in multiples of 4 (one 128-bit block per thread and draw).
_OFFSET_STEP = 4


def _key_from_cuda_generator(generator: torch.Generator | None, device: torch.device) -> int | None:
    """A key from a CUDA generator without touching the device: the generator's seed and offset
    live on the host, so the key is a hash of both and the offset is advanced, as a draw would
    advance it. A read-back of a device draw would cost a synchronization per call. ``None``
    for a state layout this torch does not have (the caller then draws on the device)."""
    if generator is None:
        index = device.index if device.index is not None else torch.cuda.current_device()
        generator = torch.cuda.default_generators[index]
    state = generator.get_state()
    if state.numel() != _CUDA_STATE_BYTES:
        return None
    seed, offset = state.view(torch.int64).tolist()
    advanced = state.clone()
    advanced.view(torch.int64)[1] = offset + _OFFSET_STEP
    generator.set_state(advanced)
    return mix_seed_and_offset(seed, offset) >> 2


def mix_seed_and_offset(seed: int, offset: int) -> int:
    """splitmix64's finalizer over the generator's seed and offset: a 64-bit key that differs
    for every offset of every seed.

    Example:
        >>> mix_seed_and_offset(0, 0) != mix_seed_and_offset(0, 4)
        True
    """
    x = (seed ^ (offset * 0x9E3779B97F4A7C15)) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)
