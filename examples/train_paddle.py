"""The program paddle_prof was born from, in today's PaddlePaddle: a static-graph MLP
(two fully connected layers, cross entropy, Momentum) run by paddle.static.Executor under
paddle_prof.paddle, the first two iterations left out with reset_profiler().

    PYTHONPATH=build/python "$(bash scripts/paddle_env.sh)/bin/python" examples/train_paddle.py [--iterations 10] [--profile-path paddle.json]

Prints the report (8 calls of each of the program's ops, 16 where it has two; `full`'s
CPU peak exactly 3,136,000 bytes) and writes a Chrome trace, its summary JSON and its
HTML page.
"""

import argparse

import numpy as np
import paddle

import paddle_prof
import paddle_prof.paddle


def build():
    """The program, its start-up program and the names to feed and fetch."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        hidden = paddle.static.nn.fc(image, size=128, activation="relu")
        predict = paddle.static.nn.fc(hidden, size=10, activation="softmax")
        loss = paddle.mean(paddle.nn.functional.cross_entropy(predict, label,
                                                              use_softmax=False))
        paddle.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)
        filled = paddle.full([1000, 784], 1.0)  # 3,136,000 bytes, the seed's own check
    return main, startup, [loss, filled]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--profile-path", default="paddle.json")
    args = parser.parse_args()
    paddle.enable_static()
    program, startup, fetch = build()
    executor = paddle.static.Executor(paddle.CPUPlace())
    executor.run(startup)
    rng = np.random.default_rng(0)
    with paddle_prof.paddle.profiler("CPU", "total", profile_path=args.profile_path):
        for iteration in range(args.iterations):
            if iteration == 2:
                paddle_prof.reset_profiler()  # leave the warm-up out
            feed = {"image": rng.standard_normal((32, 784), dtype=np.float32),
                    "label": rng.integers(0, 10, (32, 1), dtype=np.int64)}
            executor.run(program, feed=feed, fetch_list=fetch)
            paddle_prof.mark_step()


if __name__ == "__main__":
    main()
