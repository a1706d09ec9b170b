"""Write docs/img/search-page.png: the README's picture of `ragbag serve`, taken from the real page.

Starts `ragbag serve --port 0` on a built home of the sample data (default: the `make demo`
home, `.demo-home`; `benchmarks/serve_latency.py --build` makes another), opens the printed URL
in headless Chromium (Debian's, as the tests drive it), warms the server with one search, then
searches the sample data with a source facet ticked and saves the page as a palette PNG (small
enough for the README). Run from the repository root after `make demo`:
``.venv/bin/python scripts/search_page_screenshot.py [--home HOME]``.
"""

from __future__ import annotations

import argparse
import io
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RAGBAG = str(Path(sys.executable).parent / "ragbag")
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
QUERY = "how often should the magnetic filter be cleaned"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--home", type=Path, default=ROOT / ".demo-home")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "search-page.png")
    args = ap.parse_args()
    env = {**os.environ, "RAGBAG_HOME": str(args.home), "DAGSTER_HOME": str(args.home / "dagster")}
    proc = subprocess.Popen(
        [RAGBAG, "serve", "--port", "0"], env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        url = ""
        deadline = time.time() + 120
        while not url and time.time() < deadline and proc.poll() is None:
            if select.select([proc.stdout], [], [], 1.0)[0]:
                line = proc.stdout.readline()
                url = line.split()[-1] if "http://" in line else ""
        if not url:
            raise SystemExit("ragbag serve did not start")
        png = _shoot(url)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(30)
    from PIL import Image

    with Image.open(io.BytesIO(png)) as img:
        small = img.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        small.save(args.out, optimize=True)
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KB)")


def _shoot(url: str) -> bytes:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1180, "height": 720})
            page.goto(url)
            box = page.get_by_label("Search your data")
            box.fill("warm up")  # the first query of a process loads the indexes: not what the picture shows
            expect(page.locator("#summary")).to_contain_text("warm up", timeout=120_000)
            box.fill(QUERY)
            page.get_by_label("sample-docs").check()
            expect(page.locator("#results .title").first).to_be_visible()
            page.wait_for_timeout(500)
            page.locator("#results a.hit-link").first.focus()
            return page.screenshot()
        finally:
            browser.close()


if __name__ == "__main__":
    main()
