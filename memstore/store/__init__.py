"""Storage adapters: the only code in memstore that touches the disk."""
