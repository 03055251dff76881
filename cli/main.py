"""The memstore command: the entry point, the umask, interrupts and broken pipes.

Exit status: 0 success; 1 an error (or, for checking commands, a finding);
2 a usage error (a malformed option value or argument); 130 interrupted. The command
tree, and how a command line's failures become exit statuses, is cli/app.py.
"""

from __future__ import annotations

import os
import sys

from . import app
from .output import error


def main(argv: list[str] | None = None) -> int:
    # private data: whatever gets created, by memstore or by a library it calls (Tantivy and
    # USearch create their files 0644), is 0600 / 0700. Restored for in-process callers.
    umask = os.umask(0o077)
    try:
        return _main(argv)
    finally:
        os.umask(umask)


def _main(argv: list[str] | None) -> int:
    command = app.command_for(sys.argv[1:] if argv is None else argv)
    try:
        return app.invoke(command, argv)
    except KeyboardInterrupt:
        error("Error: interrupted")
        return 130
    except BrokenPipeError:
        return 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
