"""The nightly lifecycle: its rules (``rules``), a plain reference implementation of
consolidate over them (``reference``); the engine that must append the same events is
``memstore.consolidate``."""
