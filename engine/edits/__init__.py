"""Workspace edits as values, and the only code that writes the user's files (``apply``)."""
