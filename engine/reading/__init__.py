"""The Engine's reading, split by concern: a file's outline (outlines.py), the project graph
and navigation (project_graph.py), and what an address names (addresses.py). engine.api's
``Engine`` is the last of the three, adding planning, edits and its lifecycle."""
