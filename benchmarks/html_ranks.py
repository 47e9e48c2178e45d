"""How large the HTML page of a merge of 256 ranks is, and how long it takes to render in
headless Chromium, best of 3 (the targets: 20 MB, 2 s).

    PYTHONPATH=build/python python3 benchmarks/html_ranks.py [--ranks 256] [--points 2000]

The ranks' summaries are merge_ranks.py's: 500 rows and 10 steps each, each timeline
stretched to `points` points (2,000: the most a window writes), so that the page draws a
memory chart per rank at its fullest. The time is measured inside the page, from the
start of its <head> to the end of its scripts; Chromium's own start is not in it.
"""

import argparse
import importlib.util
import pathlib
import sys
import tempfile

import paddle_prof

HERE = pathlib.Path(__file__).resolve().parent


def module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--points", type=int, default=2000)
    options = parser.parse_args()
    summaries = module("merge_ranks", HERE / "merge_ranks.py")
    pages = module("test_html", HERE.parent / "tests/python/test_html.py")  # Chromium driver
    with tempfile.TemporaryDirectory() as directory:
        tmp = pathlib.Path(directory)
        paths, _ = summaries.write_summaries(directory, options.ranks, 500, options.points)
        page = tmp / "merged.html"
        paddle_prof.merge(paths).to_html(page)
        times = []
        for _ in range(3):
            result = pages.render(page, tmp, """
                return document.querySelectorAll('#per-input-table tbody tr').length;""")
            assert result["value"] == options.ranks, result
            times.append(result["render_ms"])
        print(f"{options.ranks} ranks, {options.points} points a timeline: "
              f"{page.stat().st_size:,} bytes; rendered in {min(times):.0f} ms "
              f"(best of 3; all: {', '.join(f'{t:.0f}' for t in times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
