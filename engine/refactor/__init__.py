"""Refactorings: each computes a plan (a WorkspaceEdit with its provenance); none writes files."""
