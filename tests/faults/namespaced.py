"""A small or read-only file system for the fault tests, without root: a tmpfs mounted in a
private user and mount namespace (``unshare -rm``), where the calling user is root over its own
mounts and over nothing else. Since the mount lives only as long as the namespace, a whole
scenario runs inside it, as a plan of steps (:data:`DRIVER`), and comes back as each step's exit
status and output.

chmod cannot make a home read-only for root (tests may run as root): a read-only bind mount of
the home can, for everyone.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import RAGBAG

# Steps: ["ragbag", args…] runs the CLI; ["mount", size] mounts the tmpfs the home lives on;
# ["fill"] fills it to the last byte, ["unfill"] frees that again; ["ro"] / ["rw"] make the home
# read-only (a bind mount remounted ro) and writable again; ["sh", cmd] runs a shell command in
# the home's environment; ["during", stage, ragbag_step, step] starts the ragbag step, waits
# until one of its runs' `stage` steps holds its lease, then runs `step` (say, ["fill"]) while
# the build goes on.
DRIVER = r"""
import json, os, subprocess, sys, tempfile, time
from pathlib import Path

plan = json.loads(Path(sys.argv[1]).read_text())
fs, home, ragbag = Path(plan["fs"]), Path(plan["home"]), plan["ragbag"]
env = {**os.environ, "RAGBAG_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
out = []

def act(step):
    kind = step[0]
    if kind == "ragbag":
        return spawn([ragbag, *step[1:]])
    if kind == "mount":
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={step[1]},mode=0700", "tmpfs", str(fs)], check=True)
    elif kind == "fill":
        with open(fs / "filler", "ab", buffering=0) as f:
            block = bytes(1 << 20)
            while block:
                try:
                    f.write(block)
                except OSError:  # full for this size: the rest in smaller pieces, to the last byte
                    block = block[: len(block) // 2]
    elif kind == "unfill":
        (fs / "filler").unlink()
    elif kind == "ro":
        subprocess.run(["mount", "--bind", str(home), str(home)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(home)], check=True)
    elif kind == "rw":
        subprocess.run(["umount", str(home)], check=True)
    elif kind == "sh":
        return spawn(["sh", "-c", step[1]])
    return None

def spawn(args):
    # Output to files, not pipes: a process the step left behind (a tail -F Dagster started)
    # would hold a pipe open, and reading it to its end would wait for good.
    files = (tempfile.TemporaryFile(), tempfile.TemporaryFile())
    proc = subprocess.Popen(args, env=env, stdout=files[0], stderr=files[1])
    proc.files = files
    return proc

def finish(step, proc, **extra):
    proc.wait(timeout=900)
    texts = []
    for f in proc.files:
        f.seek(0)
        texts.append(f.read().decode(errors="replace"))
    out.append({"step": step, "rc": proc.returncode, "stdout": texts[0], "stderr": texts[1], **extra})

for step in plan["steps"]:
    if step[0] == "during":
        _, stage, inner, then = step
        proc = act(inner)
        leases = home / "state" / "leases"
        deadline = time.time() + 300
        while proc.poll() is None and time.time() < deadline:
            if leases.is_dir() and any(f"__{stage}." in p.name for p in leases.iterdir()):
                break
            time.sleep(0.01)
        caught = proc.poll() is None
        act(then)
        finish(step, proc, caught=caught)
        continue
    proc = act(step)
    if proc is None:
        out.append({"step": step, "rc": 0})
    else:
        finish(step, proc)
print(json.dumps(out))
"""


@functools.cache
def available() -> str | None:
    """None when this machine lets an unprivileged process mount a tmpfs in its own namespaces;
    else why not (then the tests that need it are skipped, saying so)."""
    try:
        probe = subprocess.run(
            ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt 2>/dev/null || exit 3"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"no unshare(1): {e}"
    if probe.returncode != 0:
        return f"user and mount namespaces are not allowed here (unshare -rm: {probe.stderr.decode().strip()[:200]})"
    return None


def run(tmp_path: Path, steps: list[list[Any]]) -> list[dict[str, Any]]:
    """Run the plan in a fresh namespace over ``tmp_path/fs`` (the home: ``tmp_path/fs/home``);
    each step's result, in order."""
    fs = tmp_path / "fs"
    fs.mkdir(exist_ok=True)
    plan = {"fs": str(fs), "home": str(fs / "home"), "ragbag": RAGBAG, "steps": steps}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    proc = subprocess.run(
        ["unshare", "-rm", sys.executable, "-c", DRIVER, str(tmp_path / "plan.json")],
        capture_output=True,
        text=True,
        timeout=1800,
        env={k: v for k, v in os.environ.items() if k not in ("RAGBAG_HOME", "DAGSTER_HOME")},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)
