"""Run jedi-language-server with jedi's reference-search file limit lifted.

jedi stops looking for references after 30 files
(``jedi.inference.references._PARSED_FILE_LIMIT``) and says nothing: on
Django it found 87 of 345 references. A refactoring engine needs all of them.
"""

from __future__ import annotations

import sys


def main() -> None:
    import jedi.inference.references as references
    from jedi_language_server.cli import cli

    references._PARSED_FILE_LIMIT = sys.maxsize
    sys.argv = ["jedi-language-server", *sys.argv[1:]]
    cli()


if __name__ == "__main__":
    main()
