"""A 200 MiB `.tf` in a tagged commit: docs name it as too large without reading it, so their
peak memory stays within a few MiB whatever the file's size (issue 18: it was read whole, and
peak memory grew by 400 MB)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from gitreg.docs.extract import module_docs
from gitreg.docs.model import ModuleDocs
from gitreg.docs.service import DocsService
from gitreg.git.trees import DOC_BYTES_MOST, TF_FILE_MOST, DocFile, doc_files
from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo

HUGE = 200 * 2**20
PEAK_MOST = 16 * 2**20


def _repository_with_a_huge_file(path: Path) -> GitRepo:
    repo = GitRepo(path)
    repo.write({"main.tf": 'variable "region" {}\n', "README.md": "Small.\n"})
    # Zeros, made sparse: no disk written for the file, and git compresses it to a few hundred KiB.
    with open(repo.path / "huge.tf", "wb") as huge:
        huge.truncate(HUGE)
    repo.commit("a huge file")
    repo.tag("v1.0.0")
    return repo


def _parser_loaded() -> None:
    """python-hcl2 builds its parser at the first parse (about 12 MiB, once per process): what
    is measured is a build's own memory."""
    module_docs([DocFile("warm.tf", b'variable "w" {}\n')], commit="0" * 40)


def _named_too_large(docs: ModuleDocs) -> None:
    assert [(p.path, p.message) for p in docs.root.problems] == [
        ("huge.tf", f"larger than {TF_FILE_MOST} bytes: not read")
    ]
    assert [i.name for i in docs.root.inputs] == ["region"]
    assert docs.root.description == "Small."


def test_the_warming_build_reads_no_byte_of_a_200_mib_file_from_a_pack(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """The build that warming (and a page, and `gitreg docs`) runs, on the clone gitreg fetched,
    where the file is in a pack."""
    repo = _repository_with_a_huge_file(tmp_path / "repo")
    catalog = write_catalog(
        f"modules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n"
    )
    sync = ModuleSync(catalog)
    sync.refresh()
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry is not None and entry.versions.releases
    service = DocsService(catalog.cache_dir)
    _parser_loaded()
    tracemalloc.start()
    try:
        docs = service.request(entry, entry.versions.releases[0]).result(timeout=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        service.close()
    assert service.builds == 1
    _named_too_large(docs)
    assert peak < PEAK_MOST, f"peak {peak / 2**20:.1f} MiB"


def test_a_loose_200_mib_object_is_not_read_either(tmp_path: Path) -> None:
    """In the work repository the file is a loose object: its header alone is read."""
    repo = _repository_with_a_huge_file(tmp_path / "repo")
    commit = repo.commit("nothing more")  # HEAD: the tagged tree, loose objects
    _parser_loaded()
    tracemalloc.start()
    try:
        files = doc_files(repo.path / ".git", commit, "")
        docs = module_docs(files, commit=commit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert DocFile("huge.tf", None, f"larger than {TF_FILE_MOST} bytes: not read") in files
    _named_too_large(docs)
    assert peak < PEAK_MOST, f"peak {peak / 2**20:.1f} MiB"


def test_a_module_s_docs_read_a_bounded_number_of_bytes_in_all(tmp_path: Path) -> None:
    """Files each under the bound, too many bytes together: those past the budget are named
    and not read, so no module costs the HCL parser more than DOC_BYTES_MOST."""
    each = TF_FILE_MOST - 1024
    count = DOC_BYTES_MOST // each + 3
    repo = GitRepo(tmp_path / "repo")
    repo.write({f"part{i:02}.tf": "# " + "x" * (each - 3) + "\n" for i in range(count)})
    files = doc_files(repo.path / ".git", repo.commit(), "")
    read = [f for f in files if f.data is not None]
    assert sum(len(f.data or b"") for f in read) <= DOC_BYTES_MOST
    assert len(read) == DOC_BYTES_MOST // each
    assert [f.why for f in files if f.data is None] == [
        f"not read: this module's docs read {DOC_BYTES_MOST} bytes in all, at most"
    ] * (count - len(read))
