"""One fresh build of the small home (``home_bench.py --size small`` generated its data first), for
paired whole-build timings with ``farm-bench``: run it as A and B under two settings.

Run from the repository root: ``.venv/bin/python benchmarks/build_small_once.py NAME`` builds the
home ``benchmarks/.work/once-NAME`` anew from the set ``benchmarks/.work/home-small/set`` with
``ragbag build`` (a subprocess, as a user runs it) and appends its wall and CPU seconds to
``benchmarks/.work/once-NAME.log``.
"""

from __future__ import annotations

import json
import shutil
import sys

import home_bench as hb

from ragbag.core.home import Home


def main() -> None:
    name = sys.argv[1]
    data_root, sources, _ = hb.described(hb.WORK / "home-small" / "set")
    home = hb.WORK / f"once-{name}"
    shutil.rmtree(home, ignore_errors=True)
    h = Home(home).ensure()
    connectors = tuple(s["connector"] for s in sources)
    for s in sources:
        h.add_source(s["name"], s["connector"], str((data_root / s["path"]).resolve()), known=connectors)
    built = hb.build(home)
    with (hb.WORK / f"once-{name}.log").open("a") as log:
        log.write(json.dumps({"wall_s": built["wall_s"], "cpu_s": built["cpu_s"]}) + "\n")


if __name__ == "__main__":
    main()
