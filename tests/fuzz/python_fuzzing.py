"""What the Python harnesses share: the regressions first, then SECONDS of fuzzing,
coverage-guided under atheris where it is installed, else a seeded mutation loop (byte
flips, truncations, splices, deep nesting, JSON's odd constants). A failing input is
written to WORK (crash-*); the exit status is non-zero on a failure."""

import os
import random
import sys
import time
import traceback

try:
    import atheris
except ImportError:
    atheris = None


def _mutate(rng, data, corpus):
    """One of libFuzzer's kinds of change, and deep nesting, which it rarely makes."""
    data = bytearray(data)
    kind = rng.randrange(6)
    at = rng.randrange(len(data) + 1)
    if kind == 0 and data:
        data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
    elif kind == 1:
        del data[at:]
    elif kind == 2:
        other = rng.choice(corpus)
        start = rng.randrange(len(other) + 1)
        data[at:at] = other[start:start + rng.randrange(1, 200)]
    elif kind == 3:
        del data[at:at + rng.randrange(1, 64)]
    elif kind == 4:
        depth = rng.choice([10, 1000, 100000])
        data[at:at] = b"[" * depth + b"]" * depth
    else:
        data[at:at] = rng.choice([b"NaN", b"1e999", b"-1", b"null", b"[]", b"{}", b'"x"', b"1" * 400,
                                  b'"pid":[]', b'"args":[]', b'"ts":1e400', b'"id":true',
                                  b"\n", b"\xff", b'"steps":0', b'"out":"/"', b"true"])
    return bytes(data)


def _mutation_loop(name, harness, seeds, work, seconds):
    rng = random.Random(1)
    corpus = list(seeds)
    deadline = time.monotonic() + seconds
    runs = 0
    while time.monotonic() < deadline:
        data = _mutate(rng, rng.choice(corpus), corpus)
        try:
            harness(data)
        except Exception:  # noqa: BLE001 - every exception is a finding
            path = os.path.join(work, f"crash-{runs}")
            with open(path, "wb") as f:
                f.write(data)
            traceback.print_exc()
            print(f"{name}: failing input written to {path}", file=sys.stderr)
            return 1
        if len(corpus) < 256:
            corpus.append(data)
        runs += 1
    print(f"{name}: {runs} inputs in {seconds} s, no failure (mutation loop; atheris is "
          f"not installed)")
    return 0


def fuzz(name, harness, seeds, work, seconds, regressions):
    """Runs `harness` on each regression file, then fuzzes it for `seconds` from `seeds`
    (a list of inputs); the exit status."""
    for path in regressions:
        with open(path, "rb") as f:
            harness(f.read())
    if seconds <= 0:
        return 0
    os.makedirs(work, exist_ok=True)
    if atheris is None:
        return _mutation_loop(name, harness, seeds, work, seconds)
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    for i, seed in enumerate(seeds):
        with open(os.path.join(corpus, f"seed{i}"), "wb") as f:
            f.write(seed)
    atheris.Setup([sys.argv[0], corpus, f"-max_total_time={seconds}", "-timeout=10",
                   "-rss_limit_mb=2048", f"-artifact_prefix={work}/"], harness)
    atheris.Fuzz()  # exits: non-zero on a failure
    return 0
