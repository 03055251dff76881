"""One module per subcommand; each exposes HELP, EPILOG and run()."""

from . import config, export, init, log, remember, show, snapshot
from . import eval as eval_
from . import index, recall, reindex

COMMANDS = [
    ("init", init),
    ("remember", remember),
    ("recall", recall),
    ("eval", eval_),
    ("index", index),
    ("reindex", reindex),
    ("show", show),
    ("log", log),
    ("export", export),
    ("snapshot", snapshot),
    ("config", config),
]
