"""Root discovery, file enumeration, path safety, and reading awkward files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.errors import FileNotInWorkspace, UnreadableFile, UnsafePath
from engine.choices import find_root
from engine.workspace import Workspace, WorkspaceConfig


def write(root: Path, relative: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("marker", [".git", "pyproject.toml", "package.json", "go.mod", "Cargo.toml"])
def test_root_is_nearest_ancestor_with_a_marker(tmp_path: Path, marker: str) -> None:
    (tmp_path / "outer").mkdir()
    (tmp_path / "outer" / "pyproject.toml").write_text("")
    project = tmp_path / "outer" / "project"
    (project / "src" / "deep").mkdir(parents=True)
    if marker == ".git":
        (project / marker).mkdir()
    else:
        (project / marker).write_text("")
    assert find_root(project / "src" / "deep") == project.resolve()


def test_root_defaults_to_the_start_folder(tmp_path: Path) -> None:
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)
    assert find_root(start) in (start.resolve(), *start.resolve().parents)
    # Nothing in tmp_path's own tree marks a root, so unless a marker sits above tmp, it is the start.
    if not any((p / m).exists() for p in start.resolve().parents for m in (".git", "pyproject.toml", "package.json", "go.mod", "Cargo.toml")):
        assert find_root(start) == start.resolve()


def test_scan_honours_gitignore_at_every_level_and_default_excludes(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\n/generated/\n")
    write(tmp_path, "app/.gitignore", "secret_*.py\n!secret_ok.py\n")
    for relative in [
        "main.py", "debug.log", "generated/out.py", "app/generated/kept.py", "app/secret_key.py",
        "app/secret_ok.py", "node_modules/lib/index.js", ".git/config", "build/x.py", "pkg.egg-info/PKG-INFO",
        "__pycache__/m.pyc", ".graft/cache.db", "env-custom/lib/site.py", "env-custom/pyvenv.cfg",
    ]:
        write(tmp_path, relative)
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("local_only.py\n")
    write(tmp_path, "local_only.py")
    files = Workspace(tmp_path).scan().files
    assert files == [".gitignore", "app/.gitignore", "app/generated/kept.py", "app/secret_ok.py", "main.py"]


def test_scan_of_a_subfolder_and_of_a_file(tmp_path: Path) -> None:
    write(tmp_path, "a/one.py")
    write(tmp_path, "b/two.py")
    workspace = Workspace(tmp_path)
    assert workspace.scan("a").files == ["a/one.py"]
    assert workspace.scan("b/two.py").files == ["b/two.py"]
    with pytest.raises(FileNotInWorkspace, match="c does not exist"):
        workspace.scan("c")


@pytest.mark.parametrize("given", ["../outside.py", "a/../../outside.py", "/etc/passwd"])
def test_paths_outside_the_root_are_refused(tmp_path: Path, given: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write(tmp_path, "outside.py")
    with pytest.raises(UnsafePath, match="outside the workspace"):
        Workspace(root).read(given)


def test_a_path_that_leaves_the_root_is_refused_even_when_a_link_outside_leads_back(tmp_path: Path) -> None:
    """`../door/a.py`, where `door` (outside the root) links to the root: the file it reaches is
    inside, but the path as given is not, and nothing may be named by a path that leaves the root
    (its workspace-relative name would be `../door/a.py`)."""
    root = tmp_path / "root"
    write(root, "a.py")
    (tmp_path / "door").symlink_to(root)
    with pytest.raises(UnsafePath, match="is outside the workspace"):
        Workspace(root).resolve("../door/a.py")


def test_absolute_path_inside_the_root_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "in.py")
    assert Workspace(tmp_path).read(str(path)).path == "in.py"


def test_symlinks_that_point_out_are_refused_and_not_listed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    secret = write(tmp_path, "secret/data.py")
    os.symlink(secret, root / "link.py")
    os.symlink(secret.parent, root / "linkdir")
    write(root, "real.py")
    os.symlink(root / "real.py", root / "alias.py")
    workspace = Workspace(root)
    with pytest.raises(UnsafePath, match="symlink"):
        workspace.read("link.py")
    with pytest.raises(UnsafePath, match="symlink"):
        workspace.read("linkdir/data.py")
    assert workspace.read("alias.py").text == "x = 1\n"
    scan = workspace.scan()
    assert scan.files == ["alias.py", "real.py"]
    assert {(s.path, s.reason) for s in scan.skipped} == {
        ("link.py", "symlink points outside the workspace"),
        ("linkdir", "symlinked folder, not followed"),
    }


def test_within_one_call_a_link_out_is_refused_though_its_folder_was_resolved_before(tmp_path: Path) -> None:
    """One call (a plan) resolves each folder once: a file beside one read before, or in a
    folder read before, that is itself a link out, is still refused."""
    root = tmp_path / "root"
    secret = write(tmp_path, "secret/data.py")
    write(root, "pkg/real.py")
    os.symlink(secret, root / "pkg" / "link.py")
    os.symlink(secret.parent, root / "pkg" / "out")
    workspace = Workspace(root)
    with workspace.remembering_reads():
        assert workspace.read("pkg/real.py").text == "x = 1\n"
        with pytest.raises(UnsafePath, match="symlink"):
            workspace.read("pkg/link.py")
        with pytest.raises(UnsafePath, match="symlink"):
            workspace.read("pkg/out/data.py")
        assert workspace.read("pkg/real.py").path == "pkg/real.py"


def test_binary_file_is_refused_with_reason(tmp_path: Path) -> None:
    write(tmp_path, "blob.py", b"\x00\x01\x02binary")
    with pytest.raises(UnreadableFile, match="binary file"):
        Workspace(tmp_path).read("blob.py")


def test_non_utf8_file_is_refused_with_the_line(tmp_path: Path) -> None:
    write(tmp_path, "latin.py", "x = 1\ny = 'caf\xe9'\n".encode("latin-1"))
    with pytest.raises(UnreadableFile, match=r"not valid UTF-8 \(byte 0xe9 on line 2\)"):
        Workspace(tmp_path).read("latin.py")


def test_oversized_file_is_refused_and_the_limit_is_configurable(tmp_path: Path) -> None:
    write(tmp_path, "big.py", "x = 1\n" * (5 * 1024 * 1024 // 6 + 1))
    with pytest.raises(UnreadableFile, match=r"5\.0 MiB is over the 4\.0 MiB limit"):
        Workspace(tmp_path).read("big.py")
    assert Workspace(tmp_path, WorkspaceConfig(max_file_bytes=8 * 1024 * 1024)).read("big.py").size > 5 * 1024 * 1024


def test_bom_and_crlf_are_recorded_and_hidden_from_parsers(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfdef f():\r\n    return 1\r\n"
    write(tmp_path, "bom.py", raw)
    source = Workspace(tmp_path).read("bom.py")
    assert source.has_bom and source.newline == "\r\n"
    assert source.data == raw[3:] and source.text.startswith("def f")
    assert source.size == len(raw)


def test_missing_file_and_folder_are_not_files(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    workspace = Workspace(tmp_path)
    with pytest.raises(FileNotInWorkspace, match="nope.py does not exist"):
        workspace.read("nope.py")
    with pytest.raises(FileNotInWorkspace, match="not a regular file"):
        workspace.read("folder")


def test_canonical_all_agrees_with_canonical_one_path_at_a_time(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "pkg" / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "pkg" / "a.py").write_text("")
    (root / "pkg" / "sub" / "b.py").write_text("")
    (root / "linked").symlink_to(root / "pkg")  # a folder link inside
    (root / "pkg" / "alias.py").symlink_to(root / "pkg" / "sub" / "b.py")  # a file link inside
    (root / "chain.py").symlink_to(root / "pkg" / "alias.py")  # a link to a link
    (root / "out").symlink_to(outside)  # a folder link out
    (outside / "c.py").write_text("")
    workspace = Workspace(root)
    inside = ["pkg/a.py", "linked/a.py", "linked/sub/b.py", "pkg/alias.py", "linked/alias.py", "chain.py",
              "pkg/new.py", "linked/sub/new/deeper.py", "./pkg/../pkg/a.py", str(root / "pkg" / "a.py")]
    assert workspace.canonical_all(inside) == {path: workspace.canonical(path) for path in inside}
    assert workspace.canonical_all(["linked/sub/b.py"]) == {"linked/sub/b.py": "pkg/sub/b.py"}
    assert workspace.canonical_all(["chain.py"]) == {"chain.py": "pkg/sub/b.py"}
    for refused in ("out/c.py", "pkg/../../outside/c.py", "linked/../out/c.py"):
        with pytest.raises(UnsafePath):
            workspace.canonical_all(["pkg/a.py", refused])
