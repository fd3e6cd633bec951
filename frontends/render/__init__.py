"""Engine values as text and JSON, the same for every front end (the CLI, MCP; LSP sends data)."""
