"""Managed language-server processes (issue 3).

This package will own every language-server subprocess and implement the
ports that ``engine`` defines. Until it does, the engine answers from
tree-sitter and regular expressions only, and says so in every result.
"""
