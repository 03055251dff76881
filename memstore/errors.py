"""Errors a user can act on. The CLI prints ``Error: <message>`` and exits with ``exit_code``."""


class MemstoreError(Exception):
    """Base class: a problem with the input or the store, explained in one line."""

    exit_code = 1


class UsageError(MemstoreError):
    """A malformed option value or argument (exit status 2)."""

    exit_code = 2


class NotFound(MemstoreError):
    """An id or key that the store does not hold."""


class StoreError(MemstoreError):
    """The store directory cannot be used as asked (permissions, a file in the way, disk full)."""


class NonMonotonicTime(MemstoreError):
    """A write whose --now is earlier than the store's latest record time."""


class StoreBusy(StoreError):
    """The store lock was not free within the wait a caller allowed (best-effort writes)."""


class PermissionDenied(MemstoreError):
    """An agent's role lacks the grant a write needs (propose_policy without write; exit 4)."""

    exit_code = 4
