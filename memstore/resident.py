"""A store kept open by a long-lived process (memstore serve): warm indexes, warm state.

Each call first catches up with the log (``index.sync.refresh``: nothing to do when the
log has not moved; otherwise what was appended is applied to the open indexes), so writes
from cron jobs, the CLI and other servers are seen by the next call, and every write goes
through the same transaction (lock, re-plan) as the CLI's. The folded state is kept
between calls too when the process turns on ``store.open.remember_states`` (memstore serve
does; it is a switch for the whole process, so a library caller decides): only the log's
tail is folded onto it.
The config is read again when memstore.toml changes (grants take effect at once).
"""

from __future__ import annotations

from pathlib import Path

from .config import load_config
from .store.layout import Layout


class Resident:
    def __init__(self, root: str | Path, *, cache_dir: Path | None = None, notify=None):
        self.layout = Layout(Path(root).expanduser())
        self.layout.check_readable()
        self.cache_dir = cache_dir
        self.notify = notify
        self._config_text = None
        self._config = None
        self._ix = None

    @property
    def config(self):
        # its bytes, not its stat: a grant edit that keeps the size and the mtime (a backup
        # restored by cp -p, two edits within one tick of the file system's clock) must hold
        text = self.layout.read_config_text()
        if self._config is None or text != self._config_text:
            config = load_config(text)
            if self._config is not None and config["embedder"] != self._config["embedder"]:
                self._ix = None  # another embedder: its vectors are another index (a grant edit keeps them)
            self._config = config
            self._config_text = text
        return self._config

    def indexes(self):
        from .index.sync import open_indexes, refresh

        config = self.config
        if self._ix is None:
            self._ix = open_indexes(self.layout, config, self.cache_dir, notify=self.notify)
        else:
            self._ix = refresh(self._ix, self.layout, config, self.cache_dir, notify=self.notify)
        return self._ix

    def state(self):
        from .store.open import load_state

        return load_state(self.layout)[0]

    def notes_of(self, agent: str | None) -> dict:
        """An agent's working memory as {"text", "at"} ({} when it has none, or for no agent),
        read with no record built (``store.open.load_notes``)."""
        from .store.open import load_notes

        return load_notes(self.layout).get(agent, {}) if agent else {}
