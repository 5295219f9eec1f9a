"""The ceilings file: its model, loading, checking counts against it, rewriting it."""
