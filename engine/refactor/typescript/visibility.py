"""Which files tsserver must be shown before a cross-file request, so that it sees the whole project.

tsserver answers references and renames only from the projects of its open documents
(engine.refactor.typescript.configs). Before a rename, a safe delete's reference check or a
move, the server is shown, besides the graph's importers of the changed files:
- one file of each project whose files mention a changed name (the first such file), so that
  tsserver loads that project: test configs, project references, solution-style roots;
- every file that mentions a changed name and that no config tsserver finds includes (a test
  under ``tests/tsconfig.tests.json``, a script outside every config): tsserver sees such a
  file only while it is open itself.
A file that does not mention the name cannot refer to it, so no other file needs opening.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Callable, Sequence

from engine.errors import GraftError, Refused
from engine.languages import LANGUAGES, profile_of
from engine.refactor.corpus import Corpus
from engine.refactor.typescript.configs import ProjectConfigs

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

FAMILY = "typescript"
LANGUAGE_IDS = tuple(language.id for language in LANGUAGES if language.family == FAMILY)


def in_family(path: str) -> bool:
    """Whether ``path`` is TypeScript or JavaScript (one family: one server, one program)."""
    kind = profile_of(path)
    return kind is not None and kind.family == FAMILY


def files_to_show(
    context: PlanContext, names: Sequence[str], importers: Callable[[list[str]], list[str]],
) -> Callable[[list[str]], list[str]]:
    """What ``LanguageServices.show_importers`` opens for a request about ``names`` in some files:
    the ``importers`` of those files, and for TypeScript and JavaScript the files above."""

    def shown(files: list[str]) -> list[str]:
        found = importers(files)
        if not any(in_family(path) for path in files):
            return found
        return list(dict.fromkeys([*found, *project_files(context, names)]))

    return shown


def project_files(context: PlanContext, names: Sequence[str]) -> list[str]:
    """One mentioning file per project, and every mentioning loose file (see the module's text)."""
    corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())
    mentioning = list(dict.fromkeys(path for name in names for language in LANGUAGE_IDS
                                    for path in corpus.mentioning(name, language)))
    if not mentioning:
        return []
    configs = project_configs(context)
    first_of_project: dict[str, str] = {}
    loose: list[str] = []
    for path in mentioning:
        owner = configs.owner(path)
        if owner is None:
            loose.append(path)
        else:
            first_of_project.setdefault(owner.path, path)
    return [*first_of_project.values(), *loose]


def same_project(context: PlanContext) -> Callable[[str, str], bool]:
    """Whether tsserver, opening the first file, puts the second in the same config's project
    (for ``LanguageServices.show_importers``); the configs are read on the first question."""
    configs: list[ProjectConfigs] = []

    def same(first: str, second: str) -> bool:
        if not in_family(first) or not in_family(second):
            return False
        if not configs:
            configs.append(project_configs(context))
        owner = configs[0].owner(first)
        other = configs[0].owner(second)
        return owner is not None and other is not None and owner.path == other.path

    return same


_KEPT_CONFIGS: OrderedDict[str, ProjectConfigs] = OrderedDict()
"""The configs of the last few workspaces (by root), kept from plan to plan while they hold."""
_KEPT_WORKSPACES = 8
_KEPT_LOCK = threading.Lock()  # a rename asks beside its request, from the pool's thread too


def project_configs(context: PlanContext) -> ProjectConfigs:
    """The workspace's configs, kept while every config file reads as it did (a rename asks which
    project owns each file that mentions the name, before its request and again beside it)."""
    listing = context.workspace_files()
    key = str(context.workspace.root)
    with _KEPT_LOCK:
        kept = _KEPT_CONFIGS.get(key)
    if kept is not None and kept.still_holds(listing, lambda path: _text(context, path)):
        return kept
    made = ProjectConfigs(listing, lambda path: _text(context, path))
    with _KEPT_LOCK:
        _KEPT_CONFIGS[key] = made
        _KEPT_CONFIGS.move_to_end(key)
        while len(_KEPT_CONFIGS) > _KEPT_WORKSPACES:
            _KEPT_CONFIGS.popitem(last=False)
    return made


class ProjectNotLoaded(Refused):
    code = "project_not_loaded"


def unseen_mentions(context: PlanContext, names: Sequence[str]) -> list[tuple[str, str]]:
    """Each file that mentions ``names`` and that tsserver may not see as the project does, with
    why (:func:`refuse_unseen_mentions`): it needs no server's answer, so a rename works it out
    while the server computes."""
    corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())
    mentioning = dict.fromkeys(path for name in names for language in LANGUAGE_IDS for path in corpus.mentioning(name, language))
    configs = project_configs(context)
    own_name = _package_name(context)
    unseen = []
    for path in mentioning:
        config = configs.undiscovered_mapping(path)
        if config is not None:
            unseen.append((path, f"{path} (in {config.path}, whose paths/baseUrl tsserver does not apply to it)"))
        elif own_name and configs.owner(path) is None and _imports_package(_text(context, path) or "", own_name):
            unseen.append((path, f"{path} (in no config tsserver loads, and it imports the package by its own name "
                                 f"'{own_name}', which the server resolves to the built output)"))
    return unseen


def refuse_unseen_mentions(context: PlanContext, names: Sequence[str], answered: set[str], doing: str,
                           found: list[tuple[str, str]] | None = None) -> None:
    """Refuse when a file that mentions ``names`` belongs only to a config tsserver never loads
    and that maps import paths (tests under ``tsconfig.tests.json`` importing the package by its
    own name), and the server's answer (``answered``: the files it edits or refers from) leaves it
    out: the server resolved that file's imports without the config's paths, so its silence
    there proves nothing. ``found``: :func:`unseen_mentions` of ``names``, when worked out already."""
    unseen = [why for path, why in (found if found is not None else unseen_mentions(context, names)) if path not in answered]
    if unseen:
        listing = "\n  ".join(unseen[:10]) + (f"\n  ... and {len(unseen) - 10} more" if len(unseen) > 10 else "")
        raise ProjectNotLoaded(
            f"{doing}: these files mention {', '.join(names)}, but only a config tsserver never loads includes them, "
            f"and it maps import paths, so the server could not see their uses:\n  {listing}\nnothing was changed; "
            "make that config discoverable (a tsconfig.json in its folder, or a `references` entry of the root "
            "tsconfig.json), or change those files by hand")


def _package_name(context: PlanContext) -> str | None:
    """The workspace package's own name (its root package.json), which its files may import it by."""
    text = _text(context, "package.json")
    try:
        name = json.loads(text).get("name") if text else None
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) and name else None


def _imports_package(text: str, name: str) -> bool:
    """Whether a file imports or requires ``name`` or a path of it (``zod``, ``zod/mini``)."""
    return re.search(rf"""(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*)(['"]){re.escape(name)}(?:/[^'"]*)?\1""", text) is not None


def _text(context: PlanContext, path: str) -> str | None:
    try:
        return context.workspace.read(path).text
    except (GraftError, OSError, UnicodeDecodeError):
        return None
