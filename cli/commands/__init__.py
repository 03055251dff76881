"""One module per subcommand; each exposes HELP, EPILOG and run()."""

from . import (
    brief,
    config,
    conflicts,
    consolidate,
    distill,
    export,
    forget,
    index,
    init,
    judge,
    log,
    recall,
    reindex,
    remember,
    replay,
    show,
    snapshot,
    stats,
)
from . import eval as eval_
from . import import_

COMMANDS = [
    ("init", init),
    ("remember", remember),
    ("recall", recall),
    ("eval", eval_),
    ("index", index),
    ("reindex", reindex),
    ("replay", replay),
    ("show", show),
    ("consolidate", consolidate),
    ("distill", distill),
    ("conflicts", conflicts),
    ("forget", forget),
    ("judge", judge),
    ("stats", stats),
    ("brief", brief),
    ("log", log),
    ("export", export),
    ("import", import_),
    ("snapshot", snapshot),
    ("config", config),
]
