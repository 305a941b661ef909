"""A service's state as explicit, versioned data — never a pickle.

* ``codec``: how state is written to bytes (JSON through msgspec, zlib-
  compressed, with a format version) and read back; every decode error is a
  ``StateError``, never a traceback and never code executed.
* ``store``: where a service keeps it locally — a small key/value interface
  with an in-memory backend (tests, embedded) and a RocksDB one (services).
* ``schema``: what is stored — each stage kind a tagged msgspec Struct under a
  stable name, with its own version and migrations from earlier versions.
* ``changelog``: what a commit writes (changelog records, the store's write)
  and the restore; a service only calls it.
* ``recovery``: the changelog records' headers, and folding a changelog
  partition into its last snapshot.
* ``held``: journal entries held until their epoch is committed everywhere
  (the proposed one-transaction fleet, docs/design/one-transaction.md).

What each stage keeps is described by the stages themselves
(``export_state``/``import_state`` and their journals); the LARS engine's
working memory is not stored at all: it is a function of the input log from
the warm-up point of the plan's ``state_reach``, so a restore replays that
span (see docs/state.md).
"""
