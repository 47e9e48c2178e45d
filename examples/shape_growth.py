"""Memory that grows with every new input shape, explained op by op.

    python3 -m paddle_prof run --native -- examples/shape_growth.py [--inputs 200]

A ResNet-style conv net runs inference over inputs of many different heights. With
oneDNN, PyTorch caches a convolution primitive for every new shape, in memory no
framework allocator sees: the process grows step after step. Run under `--native`
(every malloc tracked), the report says why memory grew, naming the convolution op
and the input shapes that hold it, and what to do about it (its advice).
"""

import argparse

import torch

import paddle_prof
import paddle_prof.torch


class Block(torch.nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


def make_model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(),
                               Block(16), Block(16), torch.nn.AdaptiveAvgPool2d(1),
                               torch.nn.Flatten(), torch.nn.Linear(16, 10)).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=200, help="distinct input heights")
    parser.add_argument("--profile-path", default=None)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = make_model()
    with torch.no_grad(), paddle_prof.torch.profiler(
            'CPU', 'live_memory', profile_path=args.profile_path, record_shapes=True):
        for i in range(args.inputs):
            model(torch.randn(1, 3, 32 + i, 32))  # a new height: a new primitive
            paddle_prof.mark_step()


if __name__ == "__main__":
    main()
