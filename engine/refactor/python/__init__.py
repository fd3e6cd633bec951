"""Python's own passes and checks, in one place: what a server cannot see in a rename (keyword
arguments, strings, doctests, fixtures, inferred receivers, dynamic bases), jedi's rename without a
server, the checks that refuse (``name_capture``, ``import_check``), the move of a top-level symbol
(``move`` with ``move_source``, ``move_importers``, ``move_rewrite`` on LibCST trees, ``cst_edits``)
and a module's references after a file rename (``module_references``, ``module_mentions``,
``module_doctests``). The language-neutral orchestration (``engine.refactor.rename``,
``rename_file``, the policies) calls them for Python files."""
