from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, out

HELP = """Print the effective configuration (defaults merged with memstore.toml).

Every setting is shown with its current value as TOML that can be copied into
STORE/memstore.toml and edited; memstore(5) documents each one."""

EPILOG = """\b
Examples:
  memstore config > ~/.local/share/memstore/memstore.toml
  memstore config --json"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    from memstore.config import thaw, to_toml

    e = env(now)
    if json:
        emit_json(thaw(e.config))
    else:
        out(to_toml(e.config).rstrip("\n"))
