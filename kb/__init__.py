"""The knowledge-base article format (../shared/kb-format.md): parsing, chunking and text analysis."""
