"""How each operation of the registry (engine.refactor.operations) plans: one module per
operation, holding what its ``plan(context)`` decides (which declarations go together, stub
twins, import checks, what refuses) and the passes it calls.

The registry's modules keep only the operations' fields and import their policy inside
``plan``: the registry is imported by ``graft --help`` and by every front end's start, and the
policies pull in LibCST, the graph (networkx), jedi and tree-sitter.
"""
