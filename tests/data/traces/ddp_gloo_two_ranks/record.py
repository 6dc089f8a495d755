"""record.py OUT_DIR: a 2-rank DistributedDataParallel job (Gloo, CPU) recorded by Python's
torch.profiler, one trace per rank (rank0.json, rank1.json): the multi-rank traces recorded outside
the workbook that tests/oracle/multi_rank_independent.py reads. Run with Debian 13's python3-torch
(2.6); the stored traces were written so, on the workbook's 2-core CI machine."""
import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
from torch.profiler import profile, schedule, ProfilerActivity

def run(rank, world, store_path, out):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    store = dist.FileStore(store_path, world)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(32, 64); y = torch.randn(32, 64)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=3)) as prof:
        for _ in range(5):
            opt.zero_grad()
            torch.nn.functional.mse_loss(ddp(x), y).backward()
            opt.step()
            prof.step()
    prof.export_chrome_trace(os.path.join(out, f"rank{rank}.json"))
    dist.destroy_process_group()

if __name__ == "__main__":
    out = sys.argv[1]; os.makedirs(out, exist_ok=True)
    store = os.path.join(out, "store")
    if os.path.exists(store): os.remove(store)
    mp.spawn(run, args=(2, store, out), nprocs=2)
    if os.path.exists(store):
        os.remove(store)
    print(torch.__version__)
