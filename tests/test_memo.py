"""The memo tables of the emitters and the checker stay bounded however many bundles one process builds."""

from __future__ import annotations

from rlobs.bundle import filters, memo, yamlemit
from rlobs.bundle.check import Checker
from rlobs.bundle.spec import Rendered


def test_a_full_table_is_emptied_before_the_next_entry() -> None:
    table: dict[str, int] = {}
    for i in range(10):
        memo.put(table, str(i), i, limit=4)
    assert table == {"8": 8, "9": 9}
    found: set[int] = set()
    for i in range(10):
        memo.add(found, [i], limit=4)
    assert found == {8, 9}


def test_the_yaml_writer_and_resolver_tables_are_bounded() -> None:
    writer = yamlemit.Writer(filters._implicit_str)
    for i in range(memo.LIMIT + 100):
        assert writer.dump({f"key{i}": f"value{i}"}) == filters.to_yaml_pyyaml({f"key{i}": f"value{i}"})
    assert 0 < len(writer._keys) <= memo.LIMIT and 0 < len(writer._values) <= memo.LIMIT
    resolved = type(filters._dumper())._resolved
    assert 0 < len(resolved) <= memo.LIMIT


def test_what_a_checker_checked_is_bounded_and_what_it_was_told_is_not() -> None:
    with Checker() as checker:
        for i in range(memo.LIMIT + 100):
            checker.check([Rendered(f"{i}.json", f"[{i}]\n", "json")])
        assert 0 < len(checker._passed) <= memo.LIMIT
    with Checker() as checker:  # a fleet's clusters, built by the pool's workers: one bundle's files
        checker.remember([Rendered(f"{i}.json", f"[{i}]\n", "json") for i in range(memo.LIMIT + 100)])
        assert len(checker._passed) == memo.LIMIT + 100
