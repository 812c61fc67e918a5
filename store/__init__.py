"""Storage: SQLite is the source of truth for documents and chunks; indexes are derived from it."""
