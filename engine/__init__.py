"""codegraft's pure core: workspace, symbols, name paths and (later) edits.

Nothing in this package starts a process or speaks a protocol; language
servers are reached through ports that ``lsp_pool`` implements.
"""
