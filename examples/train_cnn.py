"""A small CNN trained on synthetic MNIST-sized data under paddle_prof.

    PYTHONPATH=build/python python3 examples/train_cnn.py [--iterations 10] [--workers 2] [--profile-path profile.json] [--listen]

Prints the report when training ends and writes a Chrome trace (open it in
https://ui.perfetto.dev) and its summary JSON. With --listen it opens no window of its
own and listens instead: `python3 -m paddle_prof trigger` or `top` profiles it while it
trains. The first two iterations are warm-up,
left out with reset_profiler(), as in Paddle's profiler example. The batches come from
a DataLoader with worker processes: their ops (the dataset's aten::randn, the collate's
aten::stack) are merged into the report, and `processes` lists the workers.
"""

import argparse

import torch

import paddle_prof
import paddle_prof.torch


class SyntheticMNIST(torch.utils.data.Dataset):
    """Images and labels made up on the fly, as a decoding dataset would make them."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        generator = torch.Generator().manual_seed(index)
        return torch.randn(1, 28, 28, generator=generator), index % 10


class SmallCNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2))
        self.classifier = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Dropout(0.25),
                                              torch.nn.Linear(32 * 7 * 7, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def train(model, optimizer, loader, warm_up: bool) -> torch.Tensor:
    """The training loop; `warm_up` leaves its first two iterations out of the window."""
    for it, (images, labels) in enumerate(loader):
        if warm_up and it == 2:
            paddle_prof.reset_profiler()
        with paddle_prof.record_event('train_step'):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        paddle_prof.mark_step(num_samples=len(images))  # the ips: line
    return loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    parser.add_argument("--profile-path", default="profile.json")
    parser.add_argument("--sorted-key", default="total")
    parser.add_argument("--listen", action="store_true",
                        help="open no window: listen for 'python3 -m paddle_prof trigger' and "
                             "'top' while training")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loader = torch.utils.data.DataLoader(SyntheticMNIST(args.iterations * args.batch_size),
                                         batch_size=args.batch_size, num_workers=args.workers)

    if args.listen:
        paddle_prof.listen()
        loss = train(model, optimizer, loader, warm_up=False)
        print(f"final loss {loss.item():.4f}")
        return
    with paddle_prof.torch.profiler('CPU', args.sorted_key, profile_path=args.profile_path,
                                    record_shapes=True) as prof:
        loss = train(model, optimizer, loader, warm_up=True)
    print(f"final loss {loss.item():.4f}; {len(prof.report.events)} rows, "
          f"{len(prof.report.steps)} steps, wall {prof.report.wall_ms:.1f} ms, "
          f"{len(prof.report.processes)} worker processes merged")
    if args.profile_path:
        print(f"trace: {args.profile_path}  summary: {args.profile_path}.summary.json  "
              f"report: {args.profile_path}.html")


if __name__ == "__main__":
    main()
