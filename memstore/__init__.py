"""memstore: long-term memory for AI agents in one directory of plain files.

The package is a library of pure functions over frozen values; only
``memstore.store`` touches the disk. Heavy modules (pyarrow, numpy, tantivy,
usearch, the embedder) are imported inside the functions that need them so
that ``remember`` and ``--help`` start fast.
"""

__version__ = "0.14.1"
