"""One rank of a two-host data-parallel job (torch.distributed, gloo), run by
test_many_hosts.py inside its own network, UTS and pid namespaces: its own host name, its
own address, and pid 1. Profiled to <dir>/rank{rank}.json. Rank 1 is slower (it sleeps
30 ms inside record_event('slow_op') each step) and holds 100 MiB more while it runs.

    host_rank_job.py RANK OUT_DIR MASTER_ADDR PORT
"""

import os
import sys
import time

import torch
import torch.distributed as dist

import paddle_prof
import paddle_prof.torch

STEPS = 3
EXTRA_BYTES = 100 << 20


def data_parallel(rank, master, port):
    """Joins the two-rank gloo job at master:port: its model, optimizer and batch."""
    os.environ.update(MASTER_ADDR=master, MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank, world_size=2)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 4))
    return model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(8, 16)


def main():
    rank, out_dir, master, port = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    model, optimizer, data = data_parallel(rank, master, port)
    with paddle_prof.torch.profiler("CPU", "total", os.path.join(out_dir, "rank{rank}.json"),
                                    stream=open(os.devnull, "w")) as prof:
        extra = torch.empty(EXTRA_BYTES, dtype=torch.uint8) if rank == 1 else None
        for _ in range(STEPS):
            with paddle_prof.record_event("slow_op"):
                if rank == 1:
                    time.sleep(0.03)
            loss = model(data).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            prof.step()
        del extra
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
