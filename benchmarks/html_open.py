"""How long the HTML report of 1,000 rows, 10 steps and 2 places (full timelines, long
aten:: shape tags) takes to render in headless Chromium, best of 5, and its size.

    PYTHONPATH=build/python python3 benchmarks/html_open.py

The time is measured inside the page, from the start of its <head> to the end of its
scripts (the table, charts and all built); Chromium's own start is not in it.
"""

import importlib.util
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("test_html", HERE.parent / "tests/python/test_html.py")
pages = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pages)  # the tests' page builder and Chromium driver


def main() -> int:
    with tempfile.TemporaryDirectory() as directory:
        tmp = pathlib.Path(directory)
        page = pages.write_page(pages.synthetic_summary(rows=1000, steps=10, places=2),
                                tmp / "big.html")
        times = []
        for _ in range(5):
            result = pages.render(page, tmp, """
                return document.querySelectorAll('#events-table tbody tr').length;""")
            assert result["value"] == 1000, result
            times.append(result["render_ms"])
        print(f"1,000 rows, 10 steps, 2 places: {page.stat().st_size:,} bytes; rendered in "
              f"{min(times):.0f} ms (best of 5; all: {', '.join(f'{t:.0f}' for t in times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
