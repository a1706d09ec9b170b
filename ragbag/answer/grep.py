"""``grep_file``'s matching: a regular expression from an agent, compiled and run safely.

The pattern comes from a model or an MCP client, so it is untrusted: it may be empty, huge, not a
regular expression, ask the compiler for gigabytes (counted repetitions are unrolled when
compiling, so ``x{4294967294}`` is a short pattern with a huge program), or backtrack for ever.
Each of those becomes a one-line ``ToolError`` instead of a stuck or dead server.
"""

from __future__ import annotations

from typing import Any

from ragbag.answer.tool_specs import ToolError

TIMEOUT_S = 1.0
MAX_PATTERN = 1_000
MAX_REPEAT = 100_000  # counted repetitions ({n}) of a pattern, multiplied (see repeat_weight)
MAX_MATCH_CHARS = 500  # of one match's text in a result


def compile_pattern(pattern: str, ignore_case: bool) -> Any:
    """A grep pattern compiled (a ``regex`` pattern), or a one-line ToolError: empty, too long,
    repeating too much (compiling unrolls counted repetitions, so a short pattern can ask for
    gigabytes), nesting too deeply, or not a regular expression."""
    import regex

    if not pattern:
        raise ToolError("pattern is empty")
    if len(pattern) > MAX_PATTERN:
        raise ToolError(f"pattern is longer than {MAX_PATTERN} characters")
    weight = repeat_weight(pattern)
    if weight > MAX_REPEAT:
        raise ToolError(
            f"pattern {pattern[:100]!r} repeats too much: its counted repetitions ({{n}}) multiply to "
            f"{weight:,} (limit {MAX_REPEAT:,}); use smaller counts, or + and *"
        )
    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except regex.error as e:
        raise ToolError(f"bad regular expression {pattern!r}: {e}") from None
    except (RecursionError, MemoryError, OverflowError) as e:
        raise ToolError(
            f"pattern {pattern[:100]!r} is too complex to compile ({type(e).__name__}); use a simpler pattern"
        ) from None


def repeat_weight(pattern: str) -> int:
    """An upper bound on how much counted repetitions unroll: the product of the minimum count of
    every ``{m}``/``{m,n}``/``{m,}`` in the pattern. Conservative by design (repetitions in sequence
    count as if nested; an escaped ``\\{3}`` counts too): whitespace and ``#`` comments inside the
    braces are skipped as the engine does in verbose mode, so no spelling of a count is missed."""
    weight, i, n = 1, 0, len(pattern)
    while i < n:
        if pattern[i] != "{":
            i += 1
            continue
        j, digits = i + 1, ""
        while j < n:
            ch = pattern[j]
            if ch.isdigit() and ch.isascii():
                digits += ch
            elif ch == "#":  # a verbose-mode comment runs to the end of the line
                while j < n and pattern[j] != "\n":
                    j += 1
                continue
            elif not ch.isspace():  # "," ends the minimum; anything else ends the count
                break
            j += 1
        if digits:
            weight *= max(1, int(digits))
        i += 1
    return weight


def find(
    text: str,
    pattern: str,
    *,
    ignore_case: bool,
    context_chars: int,
    limit: int,
    spans: list[tuple[int, int, str]],
    doc_id: str,
) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` non-empty matches of ``pattern`` in ``text`` (position, match, context,
    and the citation of the chunk span it starts in), and how many were counted: counting stops
    at ten times ``limit``. ``doc_id`` names the document in errors."""
    rx = compile_pattern(pattern, ignore_case)
    matches: list[dict[str, Any]] = []
    total = 0
    # ``timeout`` makes the engine itself give up (it counts the process's CPU time), so a cut
    # pattern leaves no thread spinning; ``concurrent`` lets other threads run meanwhile.
    try:
        for m in rx.finditer(text, timeout=TIMEOUT_S, concurrent=True):
            if m.end() == m.start():
                continue  # empty matches say nothing
            total += 1
            if len(matches) < limit:
                lo, hi = max(0, m.start() - context_chars), min(len(text), m.end() + context_chars)
                matches.append(
                    {
                        "start": m.start(),
                        "end": m.end(),
                        "match": m.group()[:MAX_MATCH_CHARS],
                        "context": text[lo:hi],
                        "context_start": lo,
                        "citation": next((c for s, e, c in spans if s <= m.start() < e), None),
                    }
                )
            elif total >= 10 * limit:
                break
    except TimeoutError:
        raise ToolError(
            f"pattern {pattern!r} took longer than {TIMEOUT_S:g}s on {doc_id}; "
            "use a simpler pattern (no nested repetition)"
        ) from None
    except RecursionError:
        raise ToolError(f"pattern {pattern!r} recurses too deeply on {doc_id}; use a simpler pattern") from None
    return matches, total
