"""A small data-parallel training job (torch.distributed, gloo on 127.0.0.1, ranks from
torch.multiprocessing.spawn), each rank profiled to <dir>/rank{rank}.json; with
SLOW_RANK set, that rank sleeps 50 ms inside record_event('slow_op') each step."""

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import paddle_prof
import paddle_prof.torch

STEPS = 5


def train(rank, world_size, out_dir, port, slow_rank):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.randn(8, 16)
    with paddle_prof.torch.profiler("CPU", "total", os.path.join(out_dir, "rank{rank}.json"),
                                    stream=open(os.devnull, "w")) as prof:
        for _ in range(STEPS):
            with paddle_prof.record_event("slow_op"):
                if rank == slow_rank:
                    time.sleep(0.05)
            loss = model(data).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    out_dir, port = sys.argv[1], int(sys.argv[2])
    slow_rank = int(os.environ.get("SLOW_RANK", "-1"))
    mp.spawn(train, args=(2, out_dir, port, slow_rank), nprocs=2, join=True)
