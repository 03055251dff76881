"""The Typer layer of memstore: parse flags, read the clock once, render, map errors.

Installed as the package ``memstore_cli`` (see pyproject.toml), so imports inside
this package are relative.
"""
