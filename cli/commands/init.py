from ..common import JsonOpt, NowOpt, env
from ..output import emit_json, note, out

HELP = """Create an empty store (directories 0700).

Stores are also created by the first write; init only makes the directory
exist up front, for example before setting up cron jobs. Running it again is
harmless.

Only a missing or empty directory, or one holding nothing but memstore's own
files (memstore.toml, log/, ...), becomes a store: a directory with other files
in it, such as a project, is refused by init and by every other command."""

EPILOG = """\b
Examples:
  memstore --store ~/agent-memory init"""


def run(now: NowOpt = None, json: JsonOpt = False) -> None:
    e = env(now)
    existed = e.layout.exists()
    e.layout.create()
    if json:
        emit_json({"store": str(e.layout.root), "created": not existed})
    else:
        out(str(e.layout.root))
        if existed:
            note("store already exists")
