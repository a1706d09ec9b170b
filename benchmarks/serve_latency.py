"""Search latency through the search page (`ragbag serve`): the server's own time per query, warm.

    .venv/bin/python benchmarks/serve_latency.py [--home .demo-home] [--rounds 3] [--out FILE]

Starts `ragbag serve --port 0` on a built home (default: the `make demo` home, `.demo-home`;
`--build` builds sample/ into benchmarks/.work/serve-home first), opens it with the printed
token as a browser does (the cookie), warms it with one search, then issues the queries below
through ``GET /api/search`` exactly as the page's script does, ``--rounds`` times. Each response
carries ``Server-Timing: app;dur=…``, the time the server took from the request's arrival to
its response (``ragbag.apps.web.security``); the client's round trip is recorded beside it.
The first round embeds each query (a new query, as typing produces); later rounds repeat them
(the query-embedding cache, as paging and facet clicks do). Three variants: hybrid, hybrid
with a source facet, keyword mode.

The machine's load is measured meanwhile: the share of all cores busy with work that was
neither the server's nor this script's ("others"), from /proc, so a reader can tell a slow
server from a crowded machine. Results: stdout and ``--out`` (benchmarks/results/serve.json).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
RAGBAG = str(Path(sys.executable).parent / "ragbag")
OUT = ROOT / "benchmarks" / "results" / "serve.json"
QUERIES = [
    "how do I reset my password",
    "how often should the magnetic filter be cleaned",
    "function that retries a request",
    "sourdough starter feeding",
    "gate code lisbon",
    "rate limiter",
    "watering the tomatoes",
    "monthly budget",
    "pressure below 0.8 bar",
    "shopping cart total",
    "defrost cycle",
    "close my account",
    "exponential backoff",
    "heating curve settings",
    "what to pack for the trip",
    "warranty on the compressor",
]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(fields) - fields[3] - fields[4]) / tick, sum(fields) / tick


def start(home: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    proc = subprocess.Popen(
        [RAGBAG, "serve", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline:
        if select.select([proc.stdout], [], [], 1.0)[0]:
            line = proc.stdout.readline()
            if "http://" in line:
                return proc, line.split()[-1]
        if proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("ragbag serve did not print its URL")


class Client:
    def __init__(self, url: str):
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)  # one kept-alive connection
        self.conn.request("GET", f"/?{parts.query}")
        resp = self.conn.getresponse()
        resp.read()
        self.cookie = resp.getheader("set-cookie", "").split(";", 1)[0]
        assert resp.status == 303 and self.cookie, "the token did not open the page"

    def search(self, params: dict) -> tuple[float, float, int]:
        """(server ms, client ms, hits) of one search."""
        t = time.perf_counter()
        self.conn.request("GET", "/api/search?" + urlencode(params, doseq=True), headers={"Cookie": self.cookie})
        resp = self.conn.getresponse()
        body = resp.read()
        client_ms = (time.perf_counter() - t) * 1000
        assert resp.status == 200, body[:300]
        server_ms = float(resp.getheader("server-timing", "").split("dur=", 1)[1])
        return server_ms, client_ms, len(json.loads(body)["hits"])


def build_sample(home: Path) -> None:
    env = {**os.environ, "RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    for args in (["add", "files", "sample-docs", "sample/docs"], ["add", "code", "sample-code", "sample/code"]):
        subprocess.run([RAGBAG, *args], env=env, cwd=ROOT, check=True)
    subprocess.run([RAGBAG, "build"], env=env, cwd=ROOT, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--home", type=Path, default=ROOT / ".demo-home")
    ap.add_argument("--build", action="store_true", help="build sample/ into benchmarks/.work/serve-home first")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    home = args.home
    if args.build:
        home = ROOT / "benchmarks" / ".work" / "serve-home"
        if not (home / "index").exists():
            build_sample(home)
    if not (home / "sources.yaml").exists():
        raise SystemExit(f"{home}: not a built home (run `make demo`, or pass --build)")
    sources = sorted(p.name for p in (home / "index").glob("*/*"))
    proc, url = start(home)
    try:
        client = Client(url)
        client.search({"q": "warm up the index"})
        variants = {
            "hybrid": {},
            "hybrid, one source facet": {"source": sources[:1]},
            "keyword": {"mode": "keyword"},
        }
        results: dict = {"home": str(home), "sources": sources, "queries": len(QUERIES), "rounds": args.rounds}
        busy0, total0 = machine()
        cpu0 = cpu_of(proc.pid) + time.process_time()
        rows = []
        for name, extra in variants.items():
            first, repeat, client_all = [], [], []
            for r in range(args.rounds):
                for q in QUERIES:
                    server_ms, client_ms, _ = client.search({"q": q, **extra})
                    (first if r == 0 else repeat).append(server_ms)
                    client_all.append(client_ms)
            every = first + repeat
            row = {
                "variant": name,
                "calls": len(every),
                "server_p50_ms": round(statistics.median(every), 1),
                "server_p95_ms": round(pct(every, 95), 1),
                "new_query_p50_ms": round(statistics.median(first), 1),
                "repeat_p50_ms": round(statistics.median(repeat), 1) if repeat else None,
                "client_p50_ms": round(statistics.median(client_all), 1),
            }
            rows.append(row)
        busy1, total1 = machine()
        ours = cpu_of(proc.pid) + time.process_time() - cpu0
        span = total1 - total0
        results["rows"] = rows
        results["machine_busy"] = round((busy1 - busy0) / span, 3)
        results["others_busy"] = round(max(0.0, busy1 - busy0 - ours) / span, 3)
        results["cores"] = os.cpu_count()
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(30)
    for row in rows:
        print(
            f"{row['variant']:<26} server p50 {row['server_p50_ms']:>6} ms  p95 {row['server_p95_ms']:>6} ms  "
            f"new query p50 {row['new_query_p50_ms']:>6} ms  repeated {row['repeat_p50_ms']} ms  "
            f"client p50 {row['client_p50_ms']} ms  ({row['calls']} calls)"
        )
    print(
        f"machine busy {results['machine_busy']:.0%}, others {results['others_busy']:.0%} of {results['cores']} cores"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
