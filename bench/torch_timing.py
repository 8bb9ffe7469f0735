"""CUDA-event timing shared by the PyTorch comparison scripts (torch_*.py)."""
import torch


def timed(fn, iters=20, warmup=3):
    """Mean milliseconds per call of fn over iters calls, after warmup calls, on the GPU's clock."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters
