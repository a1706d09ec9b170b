"""Pathological inputs at doubling sizes, fed to each connector: no connector may spend time
superlinear in its input (issue 31).

Each case writes one input at sizes N, 2N, 4N, 8N and reads it with its connector in a fresh
process (so peak memory is the read's own), measuring the read's wall time and the process's
peak RSS. The figure that matters is the growth: ``time ratio`` = t(8N) ÷ t(N), which is 8 for
linear work and 64 for quadratic; ``per-unit`` = that ratio ÷ 8 (≈1 linear, ≥ 2 means
superlinear). Memory is reported as peak RSS above a bare import of the connector, and as a
multiple of the input's size at the largest size.

    .venv/bin/python benchmarks/pathological.py                  # every case, table to stdout
    .venv/bin/python benchmarks/pathological.py --case md-title-spaces --json out.json

The inputs are the shapes issue 31 saw stall a step: a markdown title line of spaces, unclosed
code fences, a mail signature followed by trailing spaces, one huge mbox message, a PDF drawing
one text form many times, a long folded calendar description, many events in one calendar, a
deep ChatGPT reply chain, a long Claude conversation and a one-line source file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _meter import meter  # noqa: E402

from tests.hostile_inputs import pdf_drawing_a_form  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _md_title(n: int) -> tuple[str, bytes]:
    return "note.md", b"# " + b" " * n + b"x\n\nbody\n"


def _md_fences(n: int) -> tuple[str, bytes]:
    return "note.md", b"# T\n" + b"```\ncode\n" * (n // 9) + b"\n"


def _signature(n: int) -> tuple[str, bytes]:
    body = b"Hello,\n\nthe report is attached.\n\n-- \nJane Doe" + b" " * n + b"\nACME Corp\n"
    return "sig.eml", _mail(body)


def _mail(body: bytes, n: int = 0) -> bytes:
    return (
        b"From: Jane Doe <jane@example.org>\nTo: bob@example.org\nSubject: report\n"
        b"Date: Tue, 01 Dec 2026 10:00:00 +0000\nMessage-ID: <m%d@example.org>\n\n" % n + body
    )


def _mbox_big(n: int) -> tuple[str, bytes]:
    line = b"All work and no play makes Jack a dull boy. " * 2 + b"\n"
    body = line * (n // len(line))
    return "big.mbox", b"From jane@example.org Tue Dec  1 10:00:00 2026\n" + _mail(body) + b"\n"


def _pdf_forms(n: int) -> tuple[str, bytes]:
    return "forms.pdf", pdf_drawing_a_form(n // 11)


def _ics(events: list[bytes]) -> bytes:
    return b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n" + b"".join(events) + b"END:VCALENDAR\r\n"


def _event(k: int, description: bytes = b"") -> bytes:
    return (
        b"BEGIN:VEVENT\r\nUID:e%d@bench\r\nDTSTART:20261201T100000Z\r\nDTEND:20261201T110000Z\r\n"
        b"SUMMARY:Meeting %d\r\n" % (k, k) + description + b"END:VEVENT\r\n"
    )


def _ics_description(n: int) -> tuple[str, bytes]:
    text = b"DESCRIPTION:" + b"agenda item " * (n // 12)
    folded = b"\r\n ".join(text[i : i + 74] for i in range(0, len(text), 74)) + b"\r\n"
    return "long.ics", _ics([_event(0, folded)])


def _ics_events(n: int) -> tuple[str, bytes]:
    return "many.ics", _ics([_event(k) for k in range(n // 120)])


def _chatgpt_chain(n: int) -> tuple[str, bytes]:
    depth = n // 200
    mapping = {}
    for k in range(depth):
        mapping[f"n{k}"] = {
            "id": f"n{k}",
            "parent": f"n{k - 1}" if k else None,
            "children": [f"n{k + 1}"] if k + 1 < depth else [],
            "message": {
                "id": f"m{k}",
                "author": {"role": "user" if k % 2 == 0 else "assistant"},
                "create_time": 1_764_000_000 + k,
                "content": {"content_type": "text", "parts": [f"turn {k} about the quarterly report"]},
            },
        }
    conv = {"title": "chain", "id": "c1", "create_time": 1_764_000_000, "update_time": 1_764_000_000 + depth,
            "mapping": mapping, "current_node": f"n{depth - 1}"}  # fmt: skip
    return "conversations.json", json.dumps([conv]).encode()


def _claude_long(n: int) -> tuple[str, bytes]:
    count = n // 200
    messages = [
        {"uuid": f"u{k}", "sender": "human" if k % 2 == 0 else "assistant", "text": f"turn {k} about the report",
         "content": [{"type": "text", "text": f"turn {k} about the report"}],
         "created_at": "2026-12-01T10:00:00Z", "parent_message_uuid": f"u{k - 1}" if k else None}
        for k in range(count)
    ]  # fmt: skip
    conv = {"uuid": "c1", "name": "long", "created_at": "2026-12-01T10:00:00Z",
            "updated_at": "2026-12-01T10:00:00Z", "chat_messages": messages}  # fmt: skip
    return "conversations.json", json.dumps([conv]).encode()


def _code_line(n: int) -> tuple[str, bytes]:
    return "long.py", b"x = [" + b"1, " * (n // 3) + b"]\n"


CASES: dict[str, tuple[str, Callable[[int], tuple[str, bytes]], int]] = {
    # name: (connector, input of size n, base size n in bytes)
    "md-title-spaces": ("files", _md_title, 2_000_000),
    "md-unclosed-fences": ("files", _md_fences, 2_000_000),
    "pdf-form-bomb": ("files", _pdf_forms, 200_000),
    "mail-signature-spaces": ("mail", _signature, 200_000),
    "mbox-one-huge-message": ("mail", _mbox_big, 8_000_000),
    "ics-long-description": ("calendar", _ics_description, 1_000_000),
    "ics-many-events": ("calendar", _ics_events, 1_000_000),
    "chatgpt-deep-chain": ("chatgpt", _chatgpt_chain, 1_000_000),
    "claude-long-conversation": ("claude", _claude_long, 1_000_000),
    "code-one-long-line": ("code", _code_line, 100_000),
}
_CHILD = """
import json, resource, sys, time
from pathlib import Path
from ragbag import connectors
from ragbag.core.records import Document, ReadError
reader = connectors.get(sys.argv[1])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
docs = errors = chars = 0
for item in reader.read(Path(sys.argv[2]), "bench", None):
    if isinstance(item, Document):
        docs += 1; chars += len(item.text)
    elif isinstance(item, ReadError):
        errors += 1
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"read_s": wall, "peak_mib": (peak - base) / 1024, "documents": docs, "errors": errors, "chars": chars}))
"""


def measure(name: str, factor: int, work: Path) -> dict:
    connector, make, base = CASES[name]
    filename, data = make(base * factor)
    folder = work / f"{name}-{factor}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_bytes(data)
    with meter() as m:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, connector, str(path)], capture_output=True, text=True, timeout=3600
        )
    if done.returncode != 0:
        return {"size": len(data), "failed": done.stderr[-300:]}
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out.update(size=len(data), others_busy=m["others_busy"])
    path.unlink()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="one case (repeatable); default all")
    parser.add_argument("--factors", default="1,2,4,8", help="multiples of each case's base size")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    factors = [int(f) for f in args.factors.split(",")]
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="ragbag-pathological-") as tmp:
        for name in args.case or list(CASES):
            results[name] = [measure(name, f, Path(tmp)) for f in factors]
            rows = results[name]
            ok = [r for r in rows if "failed" not in r]
            ratio = ok[-1]["read_s"] / ok[0]["read_s"] if len(ok) == len(rows) and ok[0]["read_s"] > 0 else None
            span = factors[-1] / factors[0]
            print(
                f"| {name} | {CASES[name][0]} | {rows[0]['size']:,} → {rows[-1]['size']:,} | "
                + " / ".join(f"{r['read_s']:.3f}" if "read_s" in r else "FAILED" for r in rows)
                + f" | {ratio:.1f} | {ratio / span:.2f} | "
                if ratio
                else f"| {name} | failed: {rows}",
                f"{ok[-1]['peak_mib']:.0f} MiB ({ok[-1]['peak_mib'] * 2**20 / rows[-1]['size']:.1f}× input) | "
                f"{ok[-1]['documents']} docs, {ok[-1]['errors']} errors | {max(r['others_busy'] or 0 for r in ok):.0%} |"
                if ok
                else "",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
