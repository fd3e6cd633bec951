"""Languages without a grammar wheel here: their symbols come from regular expressions (low
confidence), and every refactoring beyond symbol edits needs their language server."""

from __future__ import annotations

from engine.languages.profile import Language

PROFILES = (
    Language("ruby", "ruby", (".rb", ".rake"), ("Rakefile", "Gemfile")),
    Language("kotlin", "kotlin", (".kt", ".kts")),
    Language("php", "php", (".php",)),
    Language("swift", "swift", (".swift",)),
    Language("scala", "scala", (".scala",)),
    Language("lua", "lua", (".lua",)),
    Language("shellscript", "shellscript", (".sh", ".bash")),
)
