"""The ``graft`` command: a thin front end over :class:`engine.api.Engine`."""
