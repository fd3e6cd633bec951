"""Small entry points that start a language server with adjusted settings."""
