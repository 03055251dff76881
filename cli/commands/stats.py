from memstore.tally import BINS

from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, out, safe

HELP = """Show the store's health: counts by tier, level and status, open conflicts,
and a histogram of effective salience at --now.

The histogram covers active memories; protected ones (risk or importance at or
above salience.protect_threshold) do not decay, and those under distill.floor
are what the next `memstore distill` abstracts."""

EPILOG = """\b
Examples:
  memstore stats
  memstore stats --now 2027-01-01 --json"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    from memstore.index.current import open_current, read_or_fold
    from memstore.store.open import load_state
    from memstore.tally import tally, tally_current

    e = env(now)
    def fold() -> dict:
        state, _reader = load_state(e.layout)
        return tally(state.ordered(), e.now, e.config)

    current = open_current(e.layout)
    if current is not None:  # the records index and the log after it: no fold
        result = read_or_fold(lambda: tally_current(current, e.now, e.config), fold)
    else:
        result = fold()
    if json:
        emit_json(result)
    else:
        render(result)


def render(result: dict, *, histogram: bool = True) -> None:
    """The text form of stats --json's result."""
    from memstore.model import LEVELS, STATUSES, TIERS

    out(f"{'memories':<11}{result['memories']}")
    for name, known in (("tier", TIERS), ("level", LEVELS), ("status", STATUSES)):
        counts = result[name]  # canonical JSON sorts keys: show them in the model's order
        keys = [k for k in known if k in counts] + [k for k in counts if k not in known]
        out(safe(f"{name:<11}" + "  ".join(f"{k} {counts[k]}" for k in keys)))
    out(f"{'conflicts':<11}{result['open_conflicts']} open")
    out(f"{'policies':<11}{result['active_policies']} active")
    if not histogram:
        return
    eff = result["effective"]
    out(f"effective salience at {result['at']} (active {eff['active']}, protected {eff['protected']}, "
        f"under floor {eff['floor']:g}: {eff['under_floor']})")
    bins = eff["bins"]
    top = max(bins) or 1
    for i, n in enumerate(bins):
        bar = "#" * round(30 * n / top)
        out(f"  {i / BINS:.1f}-{(i + 1) / BINS:.1f}  {bar:<30} {n}")


def render_short(result: dict) -> None:
    """stats in a few lines, without the histogram (replay shows its checkpoints so)."""
    render(result, histogram=False)
