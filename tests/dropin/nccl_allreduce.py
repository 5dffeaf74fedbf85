#!/usr/bin/env python3
"""NCCL all-reduce across two GPUs, checked exactly, with its bus bandwidth.

Run it once on NVIDIA's libcuda and once with nvlite as the only driver
(build/bin/nvlite-run python3 tests/dropin/nccl_allreduce.py) on a machine
with two GPUs, and compare the "busbw" lines (issue 14: within 10 %).

  --mode cupy   (default) one process drives both GPUs: cupy.cuda.nccl's
                NcclCommunicator.initAll, one all-reduce per GPU inside a
                group. NCCL's P2P transport then uses peer access within the
                process (cuCtxEnablePeerAccess, direct pointers).
  --mode torch  two processes (torch.multiprocessing), torch.distributed with
                the NCCL backend. NCCL then shares buffers between processes
                through CUDA IPC (cuIpcGetMemHandle), which nvlite does not
                provide: on nvlite expect NCCL to fall back to its SHM
                transport or to fail; the cupy mode is the one for nvlite.

NVLink multicast stays off: NCCL_NVLS_ENABLE=0 is forced before NCCL loads
(the device notes forbid cuMulticastCreate). Nothing here calls it.

Each rank r fills its buffer with ((i % 251) + 1) * (r + 1) as float32: the
sum over ranks is an integer below 2^24, exact in float32 whatever the
reduction order, so the check is byte exact. Prints which driver the process
mapped (NVIDIA's libcuda.so.5xx or nvlite).
"""
import argparse
import os
import sys
import time

# Before any CUDA/NCCL library is loaded.
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ.setdefault("NCCL_DEBUG", "WARN")


def driver_mapped():
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        return "unknown"
    if "libcuda.so.5" in maps:
        return "NVIDIA libcuda"
    if "libnvlite" in maps:
        return "nvlite"
    return "no driver mapped"


def expected(np, n, ranks):
    base = (np.arange(n, dtype=np.int64) % 251 + 1)
    return (base * sum(r + 1 for r in range(ranks))).astype(np.float32)


def bus_bw(nbytes, seconds, ranks):
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * 2 * (ranks - 1) / ranks


def run_cupy(args):
    import numpy as np
    import cupy as cp
    from cupy.cuda import nccl

    ranks = 2
    if cp.cuda.runtime.getDeviceCount() < ranks:
        print("nccl cupy: skipped, needs two GPUs")
        return 0
    n = args.mib * (1 << 20) // 4
    comms = nccl.NcclCommunicator.initAll(list(range(ranks)))
    bufs, streams = [], []
    for r in range(ranks):
        with cp.cuda.Device(r):
            base = cp.arange(n, dtype=cp.int64) % 251 + 1
            bufs.append((base * (r + 1)).astype(cp.float32))
            streams.append(cp.cuda.Stream(non_blocking=True))
            cp.cuda.Device(r).synchronize()

    def allreduce(send, recv):
        nccl.groupStart()
        for r in range(ranks):
            with cp.cuda.Device(r):
                comms[r].allReduce(send[r].data.ptr, recv[r].data.ptr, n, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                                   streams[r].ptr)
        nccl.groupEnd()
        for r in range(ranks):
            streams[r].synchronize()

    # Correctness: out of place, exact.
    outs = []
    for r in range(ranks):
        with cp.cuda.Device(r):
            outs.append(cp.empty_like(bufs[r]))
    allreduce(bufs, outs)
    want = expected(np, n, ranks)
    for r in range(ranks):
        with cp.cuda.Device(r):
            got = cp.asnumpy(outs[r])
        if not np.array_equal(got, want):
            bad = int(np.flatnonzero(got != want)[0])
            print(f"nccl cupy: WRONG on rank {r}: element {bad} is {got[bad]}, expected {want[bad]}")
            return 1
    # Bandwidth: in place, median of timed iterations after warm-up.
    for _ in range(args.warmup):
        allreduce(outs, outs)
    times = []
    for _ in range(args.iters):
        t = time.perf_counter()
        allreduce(outs, outs)
        times.append(time.perf_counter() - t)
    times.sort()
    med = times[len(times) // 2]
    algbw, busbw = bus_bw(n * 4, med, ranks)
    print(f"nccl cupy all-reduce {args.mib} MiB float32 x{ranks} GPUs: correct; median {med * 1e3:.3f} ms, "
          f"algbw {algbw:.1f} GB/s, busbw {busbw:.1f} GB/s; driver: {driver_mapped()}")
    for c in comms:
        c.destroy()
    return 0


def torch_worker(rank, ranks, args, results):
    import numpy as np
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{args.port}", rank=rank, world_size=ranks)
    n = args.mib * (1 << 20) // 4
    base = torch.arange(n, dtype=torch.int64, device="cuda") % 251 + 1
    x = (base * (rank + 1)).to(torch.float32)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    ok = np.array_equal(x.cpu().numpy(), expected(np, n, ranks))
    for _ in range(args.warmup):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    times = []
    for _ in range(args.iters):
        torch.cuda.synchronize()
        t = time.perf_counter()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    times.sort()
    results[rank] = (ok, times[len(times) // 2], driver_mapped())
    dist.destroy_process_group()


def run_torch(args):
    import torch
    import torch.multiprocessing as mp

    ranks = 2
    if torch.cuda.device_count() < ranks:
        print("nccl torch: skipped, needs two GPUs")
        return 0
    manager = mp.Manager()
    results = manager.dict()
    mp.spawn(torch_worker, args=(ranks, args, results), nprocs=ranks, join=True)
    oks = [results[r][0] for r in range(ranks)]
    med = max(results[r][1] for r in range(ranks))
    algbw, busbw = bus_bw(args.mib * (1 << 20), med, ranks)
    verdict = "correct" if all(oks) else "WRONG"
    print(f"nccl torch all-reduce {args.mib} MiB float32 x{ranks} GPUs: {verdict}; median {med * 1e3:.3f} ms, "
          f"algbw {algbw:.1f} GB/s, busbw {busbw:.1f} GB/s; driver: {results[0][2]}")
    return 0 if all(oks) else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["cupy", "torch"], default="cupy")
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--port", type=int, default=29517)
    args = p.parse_args()
    return run_cupy(args) if args.mode == "cupy" else run_torch(args)


if __name__ == "__main__":
    sys.exit(main())
