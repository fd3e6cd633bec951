"""Whether a journal record was written by this user's own codegraft, and what a restore may set.

A workspace can ship a ``.graft/journal`` or ``.graft/history`` of its own, and another user can
plant one in a shared folder. Recovery and undo write the files such a record names, with the
modes it names, as whoever runs codegraft, root included. So a record is acted on only when it
carries the seal of this user's per-workspace secret, which lives outside the workspace (under
the user's state folder, owner-only): a cloned or planted record cannot carry it. A record
without it is quarantined, and nothing is written from it.

Modes are restricted as well, even in a sealed record: a restore never sets setuid, setgid or
sticky bits, nor write bits for group or others, that the file it replaces does not have now.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path
from typing import Any

from engine.errors import Refused

SECRET_BYTES = 32
_SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX
_SHARED_WRITE_BITS = stat.S_IWGRP | stat.S_IWOTH
GUARDED_BITS = _SPECIAL_BITS | _SHARED_WRITE_BITS
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UntrustedJournal(Refused):
    """A journal or history record that this user's codegraft did not write."""

    code = "untrusted_journal"


class StateHomeUnusable(Refused):
    """The user's own state folder (outside the workspace) cannot hold the workspace's secret."""

    code = "state_home_unusable"


def user_state_home() -> Path:
    """``$XDG_STATE_HOME/codegraft``, else ``~/.local/state/codegraft``: the user's, not the workspace's."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "codegraft"


def _secret_path(root: Path) -> Path:
    # Keyed by the canonical root: a copy of the workspace elsewhere is another workspace.
    key = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return user_state_home() / "workspaces" / key / "journal.key"


def existing_secret(root: Path) -> bytes | None:
    """The secret that seals this workspace's journal records; None when there is none yet (then
    no record here can be this user's). Refused when the folder or file is not this user's own
    and private: a secret others can read or replace seals nothing."""
    path = _secret_path(root)
    try:
        return _read_secret(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _unusable(path, error) from None


def workspace_secret(root: Path) -> bytes:
    """The workspace's secret, made on first use."""
    path = _secret_path(root)
    found = existing_secret(root)
    if found is not None:
        return found
    try:
        _private_folder(path.parent)
        secret = os.urandom(SECRET_BYTES)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
        try:
            os.write(descriptor, secret)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        return secret
    except FileExistsError:
        return _read_secret(path)  # another process made it meanwhile
    except OSError as error:
        raise _unusable(path, error) from None


def _unusable(path: Path, error: OSError) -> StateHomeUnusable:
    return StateHomeUnusable(
        f"codegraft keeps the key that seals this workspace's journal in {path.parent}, outside the workspace, and "
        f"cannot use it ({error.strerror or error}); set XDG_STATE_HOME to a folder of your own and run again"
    )


def _private_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise StateHomeUnusable(
            f"{folder} must be a folder of your own that only you can open (mode 0700), and it is not; "
            "fix its owner and mode, or set XDG_STATE_HOME to a folder of your own"
        )


def _read_secret(path: Path) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise StateHomeUnusable(
                f"{path} must be a file of your own that only you can read (mode 0600), and it is not; "
                "remove it (its workspace's journal records then no longer count as yours) and run again"
            )
        secret = os.read(descriptor, SECRET_BYTES + 1)
    finally:
        os.close(descriptor)
    if len(secret) != SECRET_BYTES:
        raise StateHomeUnusable(f"{path} is not a key codegraft wrote; remove it and run again")
    return secret


def seal(manifest: dict[str, Any], secret: bytes) -> str:
    """The HMAC of every field of the manifest but the seal itself."""
    fields = {key: value for key, value in manifest.items() if key != "seal"}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    return hmac.new(secret, canonical, hashlib.sha256).hexdigest()


def check_sealed(manifest: dict[str, Any], secret: bytes | None) -> None:
    """Refuses a manifest that this user's codegraft did not write for this workspace."""
    creator = manifest.get("creator_uid")
    if type(creator) is not int or creator != os.getuid():
        raise UntrustedJournal(
            "it was not written by your own codegraft (creator "
            f"{creator if type(creator) is int else 'not recorded'}, you are uid {os.getuid()}): it may have come with the "
            "workspace, so nothing is restored from it"
        )
    given = manifest.get("seal")
    if secret is None or not isinstance(given, str) or not hmac.compare_digest(given, seal(manifest, secret)):
        raise UntrustedJournal(
            "its seal does not match this workspace's key (kept outside the workspace): it was not written by your own "
            "codegraft here, or was changed since, so nothing is restored from it"
        )


def restorable_mode(recorded: int | None, target: Path) -> int | None:
    """The mode a restore may give ``target``: the recorded one, less every setuid, setgid,
    sticky and group/other write bit that the file there now does not already have (a file that
    is gone has none)."""
    if recorded is None:
        return None
    try:
        current = stat.S_IMODE(os.lstat(target).st_mode)
    except OSError:
        current = 0
    return (recorded & ~GUARDED_BITS) | (recorded & current & GUARDED_BITS)
