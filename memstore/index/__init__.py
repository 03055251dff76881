"""Derived indexes, rebuildable from the log: lexical (Tantivy), records + cues (Tantivy), vectors (USearch)."""
