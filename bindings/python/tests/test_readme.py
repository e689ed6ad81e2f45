"""The README's example runs as written: two nodes one after the other, each sending the
invoice with a fenced write at its own term. The schema is migrated first, once, as the
operator does (the README's examples do not migrate: the application's account may not)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import Database, query

README = Path(__file__).resolve().parents[1] / "README.md"


def example(marker: str = '"billing", node_id=node') -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"the README has one example with {marker}"
    return found[0]


def test_the_readme_example_runs(fresh_db: Database, tmp_path: Path) -> None:
    import mysqlleader

    mysqlleader.migrate(fresh_db.url)  # the operator, once
    script = tmp_path / "billing.py"
    script.write_text(example(), encoding="utf-8")
    env = dict(os.environ, MYSQLLEADER_URL=fresh_db.url)
    for node, term in (("web-1", 1), ("web-2", 2)):
        result = subprocess.run([sys.executable, str(script), node], env=env, capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"{node}: invoice 42 sent at term {term}" in result.stdout, result.stdout
        assert f"{node}: STARTED_LEADING term={term}" in result.stdout
        assert f"{node}: STOPPED_LEADING term={term} leader=None reason=SHUTDOWN" in result.stdout
        assert query(fresh_db.url, "SELECT id, sent_by, sent_at_term FROM invoices") == [(42, node, term)]
    ended = query(fresh_db.url, "SELECT term, ended_how FROM leader_election_history ORDER BY term")
    assert ended == [(1, "resigned"), (2, "resigned")]


def test_the_readme_asyncio_example_runs(fresh_db: Database, tmp_path: Path) -> None:
    import mysqlleader

    mysqlleader.migrate(fresh_db.url)
    script = tmp_path / "reports.py"
    script.write_text(example("asyncio.run(main())"), encoding="utf-8")
    env = dict(os.environ, MYSQLLEADER_URL=fresh_db.url)
    result = subprocess.run([sys.executable, str(script), "r-1"], env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "r-1: report done at term 1" in result.stdout, result.stdout
    assert "r-1: STARTED_LEADING term=1" in result.stdout, result.stdout
    ended = query(fresh_db.url, "SELECT term, ended_how FROM leader_election_history ORDER BY term")
    assert ended == [(1, "resigned")]


def test_the_readme_examples_do_not_migrate() -> None:
    """Issue 26: every copy of a program calling migrate() fails for the documented ``--role
    app`` account; the schema is the operator's to install, once."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks
    calling = [b for b in blocks if re.search(r"\bmigrate\(", b)]
    assert not calling, f"README examples that call migrate(): {calling}"
    example_py = Path(__file__).resolve().parents[3] / "examples" / "python" / "elect.py"
    text = example_py.read_text(encoding="utf-8")
    assert re.search(r"if args\.migrate:\s*\n\s*mysqlleader\.migrate\(url\)", text), "elect.py migrates only behind --migrate"
