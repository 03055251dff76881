from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

from memstore.errors import UsageError

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out, safe

HELP = """Write, list and retire policies: rules that judge and the preamble push to agents.

distill learns policies from outcomes; `memstore policy add` records one a person
or an agent states directly, with its direction (avoid: a rule to mitigate a risk;
repeat: a practice to reinforce) and its author. A written policy has no evidence
of its own: judge shows who wrote it. `memstore policy list` lists the policies in
force (--all: retired and superseded ones too); `memstore policy retire ID` retires
one, learned or written (it stays in the log, and evidence never brings it back)."""

EPILOG = """\b
Examples:
  memstore policy add "Never deploy the payment service on Fridays" --direction avoid --author maria --subject "friday deploys"
  memstore policy list --json
  memstore policy retire m6da811e6396f2bf --reason "we have canary deploys now\""""

ADD_HELP = """Record a policy written directly: a rule, a direction and an author.

--direction avoid (or mitigate) for a rule that prevents something, repeat (or
reinforce) for a practice to keep. --author names who wrote it (a person or an
agent; --source agent for an agent's proposal, which starts at confidence 0.7).
--subject and --domain scope it like a memory: a written policy and a learned one
on the same subject that point opposite ways open a conflict for a person.
Writing the same rule again changes nothing; prints the policy's id."""

ADD_EPILOG = """\b
Examples:
  memstore policy add "Never deploy the payment service on Fridays" --direction avoid --author maria --subject "friday deploys"
  memstore policy add "Pair on every migration" --direction repeat --author review-bot --source agent --domain eng"""

LIST_HELP = """List policies: the active ones, highest confidence first (--all: every one).

Each policy is its id, direction, confidence and status, then who wrote it or the
outcomes for and against it, then its rule."""

LIST_EPILOG = """\b
Examples:
  memstore policy list
  memstore policy list --all --json"""

RETIRE_HELP = """Retire a policy (learned or written): it stops applying from --now on.

Nothing is deleted; `memstore show ID` keeps its history. Evidence never brings a
retired policy back."""

RETIRE_EPILOG = """\b
Examples:
  memstore policy retire m9e7d0836dae6763 --reason "canary deploys make Fridays safe"
  memstore policy retire m9e7d0836dae6763 --json"""


class _Policy(TyperGroup):
    def resolve_command(self, ctx, args):
        if args and not args[0].startswith("-") and self.get_command(ctx, args[0]) is None:
            raise UsageError(f"unknown action {args[0]!r}; use `memstore policy add`, `list` or `retire`")
        return super().resolve_command(ctx, args)


class _Add(TyperCommand):
    """RULE, --direction and --author are required; missing, one line says what to pass."""

    def parse_args(self, ctx, args):
        import click

        try:
            return super().parse_args(ctx, args)
        except click.MissingParameter:
            raise UsageError('policy add needs a rule, --direction avoid|repeat and --author NAME (or --agent): '
                             'memstore policy add "RULE" --direction avoid --author NAME') from None


app = typer.Typer(cls=_Policy, no_args_is_help=False, invoke_without_command=True,
                  subcommand_metavar="COMMAND [ARGS]...", rich_markup_mode=None, add_completion=False)


@app.callback()
def _group(ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        raise UsageError("policy needs an action: memstore policy add RULE --direction avoid|repeat --author NAME, "
                         "memstore policy list, or memstore policy retire ID")


@app.command("add", cls=_Add, help=ADD_HELP, epilog=ADD_EPILOG)
def add(
    rule: Annotated[str, typer.Argument(metavar="RULE", help="The rule, in words.")],
    direction: Annotated[str, typer.Option(metavar="avoid|repeat", help="avoid (mitigate) or repeat (reinforce).")],
    author: Annotated[str | None, typer.Option(help="Who wrote it (default: the --agent).")] = None,
    subject: Annotated[str | None, typer.Option(help="What it is about (its cause).")] = None,
    domain: Annotated[str | None, typer.Option(help="Scope (e.g. eng).")] = None,
    source: Annotated[str | None, typer.Option(help="human or agent (sets the initial confidence; default: "
                                                  "agent with --agent, else human).")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore import writes

    if source is not None and source not in ("human", "agent"):
        raise UsageError(f"--source {source!r} is not one of: human, agent")
    e = env(now)
    author = author or e.agent
    source = source or ("agent" if e.agent else "human")
    if author is None:
        raise UsageError("a policy needs an author: --author NAME (who wrote it)")
    done = writes.add_policy(e.layout, rule, direction=direction, author=author, now=e.now, config=e.config,
                             subject=subject, domain=domain, source=source, agent=e.agent, access=e.access)
    if json:
        emit_json({"id": done.id, "added": done.changed})
        return
    out(done.id)
    if not done.changed:
        note("this policy was written already")


@app.command("list", help=LIST_HELP, epilog=LIST_EPILOG)
def list_(
    all_: Annotated[bool, typer.Option("--all", help="Retired and superseded policies too.")] = False,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore.access import readable
    from memstore.index.current import open_current, read_or_fold
    from memstore.policies import rows as policy_rows
    from memstore.store.open import load_state

    e = env(now)

    def fold() -> list:  # from a snapshot, its policies' rows only
        return load_state(e.layout, keep=policy_rows)[0].ordered()

    def listed(m) -> bool:
        return m.level == "policy" and m.recorded_at <= e.now and (all_ or m.status == "active") and readable(e.access, m)

    current = open_current(e.layout) if e.layout.root_exists() else None
    held = fold() if current is None else read_or_fold(lambda: current.posting("level", "policy", listed), fold)
    rows = [m for m in held if listed(m)]
    rows.sort(key=lambda m: (m.status != "active", -m.confidence, m.seq, m.id))
    result = {"at": e.now, "policies": [
        {"id": m.id, "rule": m.text, "direction": m.direction, "status": m.status, "confidence": m.confidence,
         "domain": m.domain, "subject": m.subject, "author": m.author,
         "supporting": len(m.derived_from), "against": len(m.against)} for m in rows]}
    if json:
        emit_json(result)
        return
    render(result)


def render(result: dict) -> None:
    for p in result["policies"]:
        who = f"written by {p['author']}" if p["author"] else f"{p['supporting']} for, {p['against']} against"
        out(safe(f"{p['id']}  {p['direction']:<9} {p['confidence']:.2f}  {p['status']:<10} {who}"))
        out(safe(f"    {p['rule']}"))
    if not result["policies"]:
        note("no policies")


@app.command("retire", help=RETIRE_HELP, epilog=RETIRE_EPILOG)
def retire(
    ref: Annotated[str, typer.Argument(metavar="ID", help="The policy's id.")],
    reason: Annotated[str | None, typer.Option(help="Why (kept in the log).")] = None,
    now: NowOpt = None,
    json: JsonOpt = False,
) -> None:
    from memstore import writes

    e = env(now)
    done = writes.retire_policy(e.layout, ref, now=e.now, reason=reason, agent=e.agent, access=e.access)
    if json:
        emit_json({"id": done.memory.id, "retired": done.changed})
        return
    out(done.memory.id)
    if not done.changed:
        note(f"already retired at {done.memory.invalid_at}")
