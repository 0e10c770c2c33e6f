"""The first docs build of a 200-file module (read from the clone with dulwich, parsed with
python-hcl2, written to the disk cache), against `git archive --format=tar.gz` of the same
commit as the baseline, in alternating rounds; and the read of the same docs from the disk cache.

    python -m bench.docs [--files 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.harness import git
from gitreg.catalog.load import load_catalog
from gitreg.docs.service import DocsService
from gitreg.modules.resolve import Release
from gitreg.modules.sync import ModuleSync


def _tf(i: int) -> str:
    """One file of a module as people write them: typed inputs with descriptions and defaults,
    a validation block, outputs, managed and data resources."""
    return f"""
variable "name_{i}" {{
  type        = string
  description = "The name of part {i}, used in tags."
  default     = "part-{i}"
}}

variable "settings_{i}" {{
  description = <<-EOT
    Settings of part {i}.
    Every attribute is optional.
  EOT
  type = object({{
    enabled = optional(bool, true)
    size    = optional(number, {i})
    zones   = optional(list(string), ["a", "b"])
    tags    = optional(map(string), {{}})
  }})
  default  = {{}}
  nullable = false
  validation {{
    condition     = var.settings_{i}.size >= 0
    error_message = "The size cannot be negative."
  }}
}}

variable "secret_{i}" {{
  type      = string
  sensitive = true
}}

resource "null_resource" "part_{i}" {{
  triggers = {{
    name = var.name_{i}
    size = var.settings_{i}.size
  }}
}}

data "external" "lookup_{i}" {{
  program = ["echo", "{{}}"]
}}

locals {{
  label_{i} = "${{var.name_{i}}}-${{var.settings_{i}.size}}"
}}

output "id_{i}" {{
  description = "The id of part {i}."
  value       = null_resource.part_{i}.id
}}

output "label_{i}" {{
  value     = local.label_{i}
  sensitive = true
}}
"""


def _timed_s(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "big"
        (repo / "modules" / "part").mkdir(parents=True)
        (repo / "examples" / "basic").mkdir(parents=True)
        git(repo, "init", "-q")
        (repo / "README.md").write_text("# Big\n\nA module of many files.\n")
        for i in range(args.files - 3):
            (repo / f"part{i:03}.tf").write_text(_tf(i))
        (repo / "modules" / "part" / "main.tf").write_text(_tf(9999))
        (repo / "examples" / "basic" / "main.tf").write_text(
            'module "big" {\n  source = "../.."\n}\n'
        )
        for n in range(args.rounds):  # a commit per round: each round's build is a first one
            (repo / "round.tf").write_text(f"locals {{ round = {n} }}\n")
            git(repo, "add", "--all")
            git(repo, "commit", "-qm", f"round {n}")
            git(repo, "tag", f"v1.0.{n}")
        (root / "registry.yaml").write_text(
            "cache_dir: cache\nmodules:\n  - {namespace: bench, name: big, system: generic, repo: big}\n"
        )
        sync = ModuleSync(load_catalog(root / "registry.yaml"))
        sync.refresh()
        entry = sync.snapshot.index.get("bench", "big", "generic")
        assert entry is not None
        releases = sorted(entry.versions.releases, key=lambda r: r.tag)
        files = len(git(repo, "ls-files", "*.tf", "**/*.tf", "README.md").splitlines())
        cold, disk, baseline = [], [], []
        inputs = 0
        for n, release in enumerate(releases):
            service = DocsService(root / "cache")

            def build(s: DocsService = service, r: Release = release) -> None:
                nonlocal inputs
                inputs = len(asyncio.run(s.module_docs(entry, r)).root.inputs)

            def archive(c: str = release.commit) -> None:
                subprocess.run(
                    ["git", "archive", "--format=tar.gz", c],
                    cwd=repo,
                    check=True,
                    capture_output=True,
                )

            # Alternating: each round in the other order, so a drifting machine hurts both.
            if n % 2:
                baseline.append(_timed_s(archive))
                cold.append(_timed_s(build))
            else:
                cold.append(_timed_s(build))
                baseline.append(_timed_s(archive))
            assert service.builds == 1
            service.close()
            again = DocsService(root / "cache")  # a fresh process's view: memory empty, disk not
            disk.append(_timed_s(partial(build, again, release)))
            assert again.builds == 0
            again.close()
    ms = {
        name: statistics.median(values) * 1000
        for name, values in (
            ("git archive", baseline),
            ("docs build", cold),
            ("docs from disk", disk),
        )
    }
    print(f"{files} files ({inputs} inputs in the root), median of {args.rounds} rounds")
    for name, value in ms.items():
        print(f"{name:<15} {value:9.1f} ms   ratio to git archive {value / ms['git archive']:.2f}")


if __name__ == "__main__":
    main()
