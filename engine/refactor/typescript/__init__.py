"""TypeScript's and JavaScript's own hazards, in one place (shared/design/REFACTORING-HAZARDS.md):
which files tsserver must be shown before a cross-file request (``configs``, ``visibility``), the
name clashes a rename would make (``scopes``, ``clashes``), and the project's own style for what a
move writes (``style``)."""
