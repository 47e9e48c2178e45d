"""One rank of a two-rank data-parallel job (torch.distributed, gloo) that listens for
profiling requests (PADDLE_PROF_LISTEN=1 in its environment) and trains until STOP
exists, run by test_listen.py, on one host or on two network hosts. Rank 1 sleeps 2 ms
in record_event('slow_op') each step.

    listen_job.py RANK MASTER_ADDR PORT STOP
"""

import os
import sys
import time

import torch
import torch.distributed as dist

import paddle_prof
from host_rank_job import data_parallel  # the same job's setup, beside this file

MAX_STEPS = 100000


def main():
    rank, master, port, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    model, optimizer, data = data_parallel(rank, master, port)
    print("ready", os.getpid(), flush=True)
    for _ in range(MAX_STEPS):
        with paddle_prof.record_event("slow_op"):
            if rank == 1:
                time.sleep(0.002)
        loss = model(data).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        paddle_prof.mark_step()
        stopping = torch.tensor([float(os.path.exists(stop))])
        dist.all_reduce(stopping)  # both ranks stop at the same step
        if stopping.item():
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
