"""Outside programs the engine consults through its ``Tools`` port (engine/ports.py): git for
the dirty-file guard, the user's verify command, and the project's interpreter for import checks.
Not about language servers, so not in lsp_pool."""
