"""A small CNN trained on synthetic MNIST-sized data under paddle_prof.

    PYTHONPATH=build/python python3 examples/train_cnn.py [--iterations 10] [--profile-path profile.json]

Prints the report when training ends and writes a Chrome trace (open it in
https://ui.perfetto.dev) and its summary JSON. The first two iterations are warm-up,
left out with reset_profiler(), as in Paddle's profiler example.
"""

import argparse

import torch

import paddle_prof
import paddle_prof.torch


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--profile-path", default="profile.json")
    parser.add_argument("--sorted-key", default="total")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.batch_size, 1, 28, 28)
    labels = torch.randint(0, 10, (args.batch_size,))

    with paddle_prof.torch.profiler('CPU', args.sorted_key, profile_path=args.profile_path,
                                    record_shapes=True) as prof:
        for it in range(args.iterations):
            if it == 2:
                paddle_prof.reset_profiler()
            with paddle_prof.record_event('train_step'):
                loss = torch.nn.functional.cross_entropy(model(images), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            paddle_prof.mark_step()
    print(f"final loss {loss.item():.4f}; {len(prof.report.events)} rows, "
          f"{len(prof.report.steps)} steps, wall {prof.report.wall_ms:.1f} ms")
    if args.profile_path:
        print(f"trace: {args.profile_path}  summary: {args.profile_path}.summary.json")


if __name__ == "__main__":
    main()
