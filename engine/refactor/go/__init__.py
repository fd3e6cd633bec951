"""Go's own hazards, checked in one place (engine.refactor.language_passes reaches them through
``passes``): gofmt kept (``gofmt``), gopls's rename checks as typed refusals (``rename_checks``),
build constraints (``build_constraints``)."""
