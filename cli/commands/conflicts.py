import io
import textwrap
from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

from memstore.codec import dumps
from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out, safe, write_bytes, write_text

HELP = """List conflicting memories side by side, or resolve one.

Consolidation records a conflict when a newer memory updates an older one in
everyday words (a negation, a stop, a cancellation, a replacement, a new value;
any kind, with or without a subject) or two memories on one subject contradict each
other; distillation when the outcomes behind two opposite policies are near balance
(rule evidence) or a written policy meets a learned one pointing the other way.
Unless conflicts.auto_supersede is false, or the rules are unsure (an update across
languages), the newer memory supersedes the older at once (the older keeps its
history, with invalid_at set); otherwise the conflict stays open until a person
decides. `memstore conflicts list` (or plain `memstore
conflicts`) lists the open ones (--all: every conflict with how it ended);
`memstore conflicts resolve ID --keep new|old|both|dismiss` records the decision:
keep the newer memory, keep the older one (reinstating it), keep both (they do not
contradict), or dismiss the detection. Resolving an automatically settled conflict
overrides it."""

EPILOG = """\b
Examples:
  memstore conflicts
  memstore conflicts --all --json
  memstore conflicts resolve c6c442313f0ebc0f --keep old --note "still true for EU"
  memstore conflicts resolve my-memory-key --keep new
"""

LIST_HELP = """List conflicts side by side: the open ones, or with --all every one.

Each conflict is a heading (its id, which `memstore conflicts resolve` takes, the
rule that detected it, when, and its state or how it ended) and the older and the
newer memory side by side: id, text, source, confidence, recorded and occurred
times, status. Plain `memstore conflicts` lists the same way."""

LIST_EPILOG = """\b
Examples:
  memstore conflicts list
  memstore conflicts list --all --json"""

RESOLVE_HELP = """Record a person's decision on a conflict.

ID is the conflict's id (the first column of `memstore conflicts list`, or the id
in --json), or the id or --key of a memory in a conflict (its newest conflict).
--keep new keeps the newer memory and supersedes the older; --keep old keeps the
older one, reinstating it if it was superseded; --keep both keeps both (they do
not contradict after all); --keep dismiss discards the detection. Both and
dismiss stop the pair from being flagged again. --note is kept in the log as the
reason. Resolving a conflict that consolidation settled automatically overrides
that choice; resolving it the same way again appends nothing."""

RESOLVE_EPILOG = """\b
Examples:
  memstore conflicts resolve c6c442313f0ebc0f --keep old --note "still true for EU"
  memstore conflicts resolve my-memory-key --keep new"""

AllOpt = Annotated[bool, typer.Option("--all", help="List every conflict, not only open ones.")]


class _Conflicts(TyperGroup):
    """`memstore conflicts WORD`: a word that is no subcommand gets the old action message."""

    def resolve_command(self, ctx, args):
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            raise UsageError(f"unknown action {args[0]!r}; use `memstore conflicts` or "
                             "`memstore conflicts resolve ID --keep ...`")
        return super().resolve_command(ctx, args)


class _Resolve(TyperCommand):
    """ID and --keep are required; missing, they get the messages that say what to pass."""

    def parse_args(self, ctx, args):
        import click

        try:
            return super().parse_args(ctx, args)
        except click.MissingParameter as exc:
            if exc.param is not None and exc.param.name == "keep":
                raise UsageError("resolve needs --keep new, old, both or dismiss") from None
            raise UsageError("resolve needs a conflict ID: memstore conflicts resolve ID --keep "
                             "new|old|both|dismiss") from None


app = typer.Typer(cls=_Conflicts, invoke_without_command=True, subcommand_metavar="[COMMAND [ARGS]...]",
                  rich_markup_mode=None, add_completion=False)


@app.callback()
def listing(
    ctx: typer.Context,
    all_: AllOpt = False,
    keep: Annotated[str | None, typer.Option(hidden=True)] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    # plain `memstore conflicts` lists; before a subcommand this only checks nothing was given
    if ctx.invoked_subcommand is not None:
        if all_ or now is not None or json or keep is not None:
            raise UsageError(f"options go after the subcommand: memstore conflicts {ctx.invoked_subcommand} ...")
        return
    if keep is not None:
        raise UsageError("ID and --keep go with `resolve`: memstore conflicts resolve ID --keep new")
    _list(all_, now, json)


@app.command("list", help=LIST_HELP, epilog=LIST_EPILOG)
def list_(all_: AllOpt = False, now: NowOpt = None, json: JsonOpt = False) -> None:
    _list(all_, now, json)


@app.command("resolve", cls=_Resolve, help=RESOLVE_HELP, epilog=RESOLVE_EPILOG)
def resolve(
    conflict: Annotated[str, typer.Argument(metavar="ID", help="The conflict id, or a memory's id or key.")],
    keep: Annotated[str, typer.Option(metavar="new|old|both|dismiss",
                                      help="Which memory stands: new, old, both or dismiss.")],
    note_text: Annotated[str | None, typer.Option("--note", metavar="TEXT", help="Why (kept in the log).")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    _resolve(env(now), conflict, keep, note_text, json)


def _list(all_: bool, now: str | None, json: bool) -> None:
    from memstore.conflict_list import shown as shown_of
    from memstore.conflicts import records
    from memstore.index.current import read_or_fold
    from memstore.store.transaction import LogView

    e = env(now)
    # the whole page is made before any of it is printed: a records index found damaged while
    # it is read gives way to the fold (read_or_fold), and nothing of the first try shows
    page = read_or_fold(lambda: _from_index(e, all_, json), lambda: None)
    if page is None:  # no usable records index: fold the log, as before
        view = LogView(e.layout)
        state = view.state()
        found = records(view.events(), state, e.access)
        page = _page(e.now, shown_of(found, all_), state.memories, json)
    shown, text = page
    if json:
        write_bytes(text)
    else:
        at = 0
        while at < len(text):  # (about a megabyte of whole lines at a time: never a second copy)
            end = text.find(b"\n", at + (1 << 20)) + 1 or len(text)
            write_text(text[at:end].decode("utf-8", "surrogatepass"))
            at = end
        if not shown:
            note("no conflicts recorded" if all_ else "no open conflicts")


def _from_index(e, all_: bool, json: bool):
    """(the conflicts shown, the page) from the records index and the log's conflict events
    (``memstore.conflict_list``); None: no usable records index."""
    from memstore.conflict_list import listed

    got = listed(e.layout, all_, e.access)
    return None if got is None else _page(e.now, *got, json)


def _page(at: str, shown: list[dict], memories, json: bool) -> tuple[list[dict], bytes]:
    """The listing as printed, in UTF-8: canonical JSON (``emit_json`` of {"at", "conflicts"},
    made a conflict at a time) or the side-by-side text. ``memories``: the sides, by id
    (``get``), asked old then new, conflict by conflict. (Into one buffer: separate pieces
    of JSON cost several times their text in heap.)"""
    page = io.BytesIO()
    if json:
        page.write(b'{"at":' + dumps(at) + b',"conflicts":[')
    for n, r in enumerate(shown):
        if json:
            page.write(b"," if n else b"")
            page.write(dumps(_with_records(r, memories)))
        else:
            page.write("".join(line + "\n" for line in _side_by_side(_with_records(r, memories))).encode("utf-8", "surrogatepass"))
    if json:
        page.write(b"]}\n")
    return shown, page.getvalue()


def render(result: dict, *, all_: bool = False) -> None:
    """The text form of the listing (also what replay shows for a `conflicts --json` line)."""
    for r in result["conflicts"]:
        for line in _side_by_side(r):
            out(line)
    if not result["conflicts"]:
        note("no conflicts recorded" if all_ else "no open conflicts")


def _resolve(e, cid, keep, why, json) -> None:
    from memstore import writes

    done = writes.resolve_conflict(e.layout, cid, keep, now=e.now, note=why, agent=e.agent, access=e.access)
    if json:
        emit_json({"id": done.conflict, "keep": keep, "changed": done.changed})
        return
    out(safe(done.conflict))
    if not done.changed:
        note(f"already resolved: keep {keep}")


def _with_records(r: dict, memories) -> dict:
    from memstore.model import memory_to_dict

    sides = {}
    for side in ("old", "new"):
        m = memories.get(r[side])
        sides[side] = None if m is None else {
            k: v for k, v in memory_to_dict(m).items()
            if k in ("id", "key", "text", "subject", "domain", "kind", "source", "confidence", "recorded_at",
                     "occurred_at", "status", "invalid_at", "superseded_by", "level", "direction")
        }
        if m is not None and m.agent is not None:  # who holds it, when an agent wrote it
            sides[side]["agent"] = m.agent
    return {**r, "records": sides}


_W = 38


def _side_by_side(r: dict) -> list[str]:
    """The lines of one conflict in the text listing."""
    detail = f" ({r['detail']})" if r.get("detail") else ""
    ended = f" {r['resolution']}" if r.get("resolution") else ""
    lines = [safe(f"{r['id']}  {r['rule']}{detail}  detected {r['detected_at']}  {r['state']}{ended}")]
    if r.get("agents"):  # two agents hold these beliefs: one conflict naming both
        hint = "; `memstore harmonize` proposes a resolution" if r["state"] == "open" else ""
        lines.append(safe(f"  agents: {r['agents']['old']} (old) vs {r['agents']['new']} (new){hint}"))
    old, new = r["records"]["old"], r["records"]["new"]
    rows = [("", "old", "new")]
    for label, get in (
        ("id", lambda m: m["id"]), ("text", lambda m: m["text"]), ("source", lambda m: m["source"]),
        ("confidence", lambda m: f"{m['confidence']:.2f}"), ("recorded", lambda m: m["recorded_at"]),
        ("occurred", lambda m: m["occurred_at"]), ("status", lambda m: m["status"]),
    ):
        rows.append((label, get(old) if old else "-", get(new) if new else "-"))
    for label, a, b in rows:
        left, right = textwrap.wrap(safe(a), _W) or [""], textwrap.wrap(safe(b), _W) or [""]
        for i in range(max(len(left), len(right))):
            la = left[i] if i < len(left) else ""
            rb = right[i] if i < len(right) else ""
            lines.append(f"  {label if i == 0 else '':<11}{la:<{_W}}  {rb}".rstrip())
    lines.append("")
    return lines
