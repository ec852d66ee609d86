"""The documents' checkable claims: lengths, no diaries, links that resolve, every config field
and ``pdyn run`` option documented, the README's test command, sources that exist."""

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
RUNNING = ROOT / "docs" / "running.md"
REFERENCES = ROOT / "docs" / "references.md"

#: a clock time stamped in UTC: the mark of a measurement diary
UTC_TIME = re.compile(r"\d\d:\d\d(:\d\d)? UTC")
#: tables a script writes, stamped with the command and the time of its run
GENERATED = ("docs/performance", "docs/report/")
#: a Markdown link or image target, ``[text](target)``
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def tracked(*patterns: str) -> list[Path]:
    """The repository's tracked files matching ``patterns`` (every file if git is missing)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", *patterns], cwd=ROOT, check=True,
                             capture_output=True).stdout.decode()
        return [ROOT / p for p in out.split("\0") if p and (ROOT / p).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [p for pat in patterns for p in ROOT.rglob(pat) if ".venv" not in p.parts]


def documents() -> list[Path]:
    return [README, ARCHITECTURE, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_lengths():
    assert len(README.read_text().splitlines()) <= 200
    assert len(ARCHITECTURE.read_text().splitlines()) <= 200


def test_every_module_has_a_place_in_the_architecture():
    """ARCHITECTURE.md's "Where things live" names every module of the package (those of
    ``broadphase``, ``bench`` and ``analysis`` by their package: one structure, report part or
    analysis each)."""
    table = ARCHITECTURE.read_text().split("## Where things live", 1)[1].split("\n## ", 1)[0]
    package = ROOT / "pdyn"
    missing = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel.parts[0] in ("broadphase", "bench", "analysis"):
            named = f"pdyn/{rel.parts[0]}/" in table or f"`{rel.parts[0]}/`" in table
        else:
            named = f"`{path.name}`" in table or f"pdyn/{rel.as_posix()}" in table
        if not named:
            missing.append(rel.as_posix())
    assert not missing, f"modules without a place in ARCHITECTURE.md: {missing}"


def test_no_utc_time_stamps():
    bad = []
    for path in tracked("*.md", "*.py"):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        bad += [f"{rel}: {m.group(0)}" for m in UTC_TIME.finditer(text)]
    assert not bad, "a clock time in a document (tables carry the day of their run): " + "; ".join(bad)


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc):
    text = FENCE.sub("", doc.read_text())
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the page
        if not (doc.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken, f"{doc.name}: links to nothing: {broken}"


def config_fields() -> dict[str, list[str]]:
    """Dataclass name -> its field names, read from ``pdyn/config.py``'s source."""
    tree = ast.parse((ROOT / "pdyn" / "config.py").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(
                "dataclass" in ast.unparse(d) for d in node.decorator_list):
            out[node.name] = [s.target.id for s in node.body
                              if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    return out


def test_every_config_field_is_documented():
    fields = config_fields()
    assert "SimulationConfig" in fields and "ContactConfig" in fields
    page = RUNNING.read_text()
    missing = [f"{cls}.{name}" for cls, names in fields.items() for name in names
               if f"`{name}`" not in page and f"`[{name}]`" not in page]
    assert not missing, f"docs/running.md does not name: {missing}"


def test_every_run_option_is_documented(monkeypatch):
    """Every option ``pdyn run --help`` lists (its parser's help, in-process; wide lines: no
    option name is broken at a hyphen) is named in docs/running.md."""
    from pdyn.cli import _parser

    monkeypatch.setenv("COLUMNS", "200")
    sub = next(a for a in _parser()._actions if a.dest == "command")
    text = sub.choices["run"].format_help()
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", text)) - {"--help"}
    assert "--steps" in options
    page = RUNNING.read_text()
    missing = sorted(o for o in options if f"`{o}" not in page)
    assert not missing, f"docs/running.md does not name: {missing}"


def test_readme_names_the_test_commands():
    """``.ci/run`` runs the first code block after the marker; it must run the whole suite, and
    the contributing part names the fast lane."""
    text = README.read_text()
    assert "<!-- test-command -->" in (ROOT / ".ci" / "run").read_text()
    block = text.split("<!-- test-command -->", 1)[1]
    command = re.search(r"```\w*\n(.*?)```", block, re.S).group(1)
    assert "python -m pytest" in command and "not slow" not in command
    assert 'python -m pytest -m "not slow"' in text.split("## Contributing", 1)[1]


def test_cited_sources_exist():
    """Every source key (author and year in brackets) cited in the documents and the code is an
    entry of docs/references.md."""
    defined = set(re.findall(r"^- \*\*\[([^\]]+)\]\*\*", REFERENCES.read_text(), re.M))
    key = re.compile(r"\[([A-Z][A-Za-z]*\d{4}[a-z]*|mesapd-\w+|LAMMPSgranular|KratosDEMbench"
                     r"|EDEMtimestep)\]")
    missing = []
    for path in tracked("*.md", "*.py"):
        if path.relative_to(ROOT).as_posix().startswith(GENERATED):
            continue
        missing += [f"{path.name}: {k}" for k in key.findall(path.read_text()) if k not in defined]
    assert not missing, f"cited but not in docs/references.md: {missing}"


def test_no_file_cites_the_workspace():
    """Documents cite sources, not the workspace the project was written in."""
    bad = re.compile(r"(\.\./|/work/)shared\b|\b\d{3}_[0-9a-f]{16}\.txt\b")
    hits = [path.relative_to(ROOT).as_posix() for path in tracked("*")
            if path.suffix in (".md", ".py", ".toml", ".sbatch", ".txt", "")
            and bad.search(path.read_text(errors="replace"))]
    assert not hits, f"files citing the workspace: {hits}"


def test_hertz_modulus_as_stated():
    """The config's docstring and the contacts page give Hertz's E* as the code computes it."""
    from pdyn.config import ContactConfig
    from pdyn.dynamics.laws import effective_modulus

    formula = "E* = E / (2 (1 − ν²))"
    assert formula.replace("E* = ", "") in " ".join(ContactConfig.__doc__.split())
    assert formula in (ROOT / "docs" / "contacts.md").read_text()
    assert effective_modulus(3.0, 0.5) == 3.0 / (2.0 * (1.0 - 0.25))


def test_hash_grid_advice_follows_auto():
    """``hash_grid``'s "more than ~N times the cubic mean radius" is ``auto``'s rule."""
    from pdyn.broadphase import auto, hash_grid

    for text in (hash_grid.__doc__, hash_grid.HashGrid.__doc__,
                 (ROOT / "docs" / "structures.md").read_text()):
        said = re.findall(r"~(\d+(?:\.\d+)?) times the cubic mean radius", " ".join(text.split()))
        assert said and all(float(s) == auto.SPREAD_MAX for s in said)


def test_changelog_entries_are_short():
    """An upgrade note is one to three lines a user reads; measurements live in the generated
    tables, the story of a number in git history."""
    unreleased = (ROOT / "CHANGELOG.md").read_text().split("## Unreleased", 1)[1].split("\n## ")[0]
    entries = re.split(r"^- ", unreleased, flags=re.M)[1:]
    long = [e.splitlines()[0][:60] for e in entries if len(e.strip().splitlines()) > 3]
    assert entries and not long, f"CHANGELOG entries longer than three lines: {long}"


def test_formats_as_stated():
    """The format versions the documents name are the ones pdyn writes and reads."""
    from pdyn.io.hdf5 import CHECKPOINT, READABLE, SNAPSHOT, VERSIONS

    snap, ckpt = VERSIONS[SNAPSHOT], VERSIONS[CHECKPOINT]
    changelog = " ".join((ROOT / "CHANGELOG.md").read_text().split())
    assert f"**snapshot format {snap}** and **checkpoint format {ckpt}**" in changelog
    readable = (f"snapshots of formats {min(READABLE[SNAPSHOT])}–{max(READABLE[SNAPSHOT])} and "
                f"checkpoints of formats {min(READABLE[CHECKPOINT])}–{max(READABLE[CHECKPOINT])}")
    assert readable in changelog
    assert (f"pdyn writes snapshot format {snap} and checkpoint format {ckpt}"
            in " ".join((ROOT / "docs" / "output.md").read_text().split()))
    for table in ("## Snapshot formats", "## Checkpoint formats"):
        part = (ROOT / "CHANGELOG.md").read_text().split(table, 1)[1].split("\n## ")[0]
        rows = re.findall(r"^\| (\d+) \|", part, re.M)
        newest = snap if "Snapshot" in table else ckpt
        assert rows and int(rows[0]) == newest
