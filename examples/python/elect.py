"""elect.py: the shortest complete use of mysqlleader from Python.

It connects, becomes leader of the service "example-py", makes one fenced write (a write that
commits only while this node still leads at its term), resigns and exits 0.

The election schema is installed once per database by an operator, before any copy of the
program runs: `mysqlleader migrate` (the CLI). The application's account (`mysqlleader grant
ACCOUNT --role app`) may not install it, so the program does not migrate, except with
`--migrate`, for a development database whose account may (the test scripts use that).

    pip install bindings/python        # after `cargo build --release --lib`
    mysqlleader --url mysql://admin:secret@127.0.0.1:3306/app migrate     # once, as the operator
    MYSQLLEADER_URL=mysql://app:secret@127.0.0.1:3306/app python3 examples/python/elect.py
"""

import argparse
import os
import sys

import mysqlleader


def main() -> int:
    parser = argparse.ArgumentParser(description="Elects, makes one fenced write, resigns.")
    parser.add_argument("--migrate", action="store_true",
                        help="install the election schema first (a development database; "
                             "in production an operator runs `mysqlleader migrate` once)")
    args = parser.parse_args()
    # mysql://user:password@host:port/database
    url = os.environ.get("MYSQLLEADER_URL") or os.environ.get("MYSQLLEADER_TEST_URL")
    if not url:
        print("usage: MYSQLLEADER_URL=mysql://user:pass@host:port/db python3 elect.py", file=sys.stderr)
        return 2

    # 1. The election schema: installed by the operator (`mysqlleader migrate`); here only with
    #    --migrate (idempotent, cheap when current).
    if args.migrate:
        mysqlleader.migrate(url)

    with mysqlleader.Client(url) as client:
        # An application table for the example (DDL, so outside the fenced transaction).
        with client.transaction() as tx:
            tx.execute("CREATE TABLE IF NOT EXISTS example_py_log (term BIGINT UNSIGNED, node VARCHAR(128))")

        # 2. Campaign in the background, with a short lease (seconds): a crashed leader is
        #    replaced within 2 s. Leaving the `with` block closes the elector.
        with mysqlleader.Elector(client, "example-py", lease=2) as elector:
            # 3. Wait (at most 30 s) until this node leads.
            if not elector.wait_for_leadership(timeout=30):
                print(f"elect: {elector.leader_id} leads example-py", file=sys.stderr)
                return 1

            # 4. One fenced write: assert_leader has succeeded for this node's term in the
            #    transaction, and no takeover can commit before it ends. It commits when the
            #    block ends; NotLeaderError if this node no longer leads.
            with elector.fenced() as tx:
                tx.execute("INSERT INTO example_py_log (term, node) VALUES (?, ?)", [tx.term, elector.node_id])
            print(f"elect: {elector.node_id} wrote as leader of example-py at term {tx.term}")

            # 5. Resign: another node takes over at once.
            elector.resign()
    return 0


if __name__ == "__main__":
    sys.exit(main())
