"""One module per subcommand; each exposes HELP, EPILOG and run()."""

from . import config, export, init, log, remember, show, snapshot

COMMANDS = [
    ("init", init),
    ("remember", remember),
    ("show", show),
    ("log", log),
    ("export", export),
    ("snapshot", snapshot),
    ("config", config),
]
