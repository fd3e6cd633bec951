"""The daemon's own work between calls (frontends.cli.daemon_housekeeping): owed after each
call, done in one round, and done anyway after a bounded number of calls."""

from __future__ import annotations

import gc

import pytest

from frontends.cli import daemon_housekeeping
from frontends.cli.daemon_housekeeping import GIVE_BACK_SECONDS, GRACE_SECONDS, HEAVY_CALL_MB, MOST_CALLS_BETWEEN, Housekeeping


class _Engines:
    def __init__(self) -> None:
        self.indexed = 0
        self.forgotten = 0

    def index_words(self) -> None:
        self.indexed += 1

    def forget_kept_reads(self) -> None:
        self.forgotten += 1


def test_work_is_owed_after_a_call_and_done_in_one_round() -> None:
    engines = _Engines()
    housekeeping = Housekeeping(engines)
    assert not housekeeping.owed
    housekeeping.run()  # nothing owed: nothing done
    assert (engines.indexed, housekeeping.rounds) == (0, 0)
    housekeeping.after_call()
    housekeeping.after_call()
    assert housekeeping.owed and engines.indexed == 0
    assert housekeeping.describe() == {"rounds": 0, "calls_since": 2, "heap_held": False, "give_back_seconds": GIVE_BACK_SECONDS}
    housekeeping.run()
    assert engines.indexed == 1 and housekeeping.describe() == {
        "rounds": 1, "calls_since": 0, "heap_held": True, "give_back_seconds": GIVE_BACK_SECONDS}


def test_a_script_that_never_pauses_still_gets_its_garbage_collected() -> None:
    engines = _Engines()
    housekeeping = Housekeeping(engines)
    collections: list[str] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            collections.append(phase)

    gc.callbacks.append(seen)
    try:
        for _ in range(MOST_CALLS_BETWEEN - 1):
            housekeeping.after_call()
        assert engines.indexed == 0 and not collections
        housekeeping.after_call()
    finally:
        gc.callbacks.remove(seen)
    assert engines.indexed == 1 and collections and not housekeeping.owed


def test_the_grace_runs_from_the_last_answer_and_never_reaches_zero() -> None:
    housekeeping = Housekeeping(_Engines())
    assert housekeeping.seconds_to_wait(600.0) == 600.0  # nothing owed: the idle time
    housekeeping.after_call()
    assert 0 < housekeeping.seconds_to_wait(600.0) <= GRACE_SECONDS
    housekeeping._last_answer -= 2 * GRACE_SECONDS  # as if the grace had passed, status requests or not
    assert housekeeping.seconds_to_wait(600.0) > 0  # a timeout of 0 would make the socket non-blocking


def test_a_call_that_leaves_much_more_memory_behind_gets_its_round_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    resident = [200]
    monkeypatch.setattr(daemon_housekeeping, "resident_mb", lambda: resident[0])
    engines = _Engines()
    housekeeping = Housekeeping(engines)
    resident[0] = 200 + HEAVY_CALL_MB - 1
    housekeeping.after_call()
    assert housekeeping.owed and engines.indexed == 0  # a light call: deferred
    resident[0] = 200 + HEAVY_CALL_MB
    housekeeping.after_call()
    assert not housekeeping.owed and engines.indexed == 1 and housekeeping.rounds == 1
    resident[0] += 10  # measured again after the round: the next call is compared with that
    housekeeping.after_call()
    assert housekeeping.owed


def test_a_call_that_comes_during_the_round_is_not_kept_waiting_for_the_collection() -> None:
    engines = _Engines()
    housekeeping = Housekeeping(engines)
    housekeeping.after_call()
    housekeeping.run(call_waiting=lambda: True)
    assert engines.indexed == 1 and housekeeping.owed and housekeeping.rounds == 0  # the collection waits
    housekeeping.run(call_waiting=lambda: False)
    assert not housekeeping.owed and housekeeping.rounds == 1


def test_the_freed_heap_goes_back_only_once_the_daemon_has_been_idle_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    """Given back at the end of the grace, the heap was faulted in again by the next call, which
    paid for it; it goes back once no call came for GIVE_BACK_SECONDS."""
    given_back: list[bool] = []
    monkeypatch.setattr(daemon_housekeeping, "_give_back_free_memory", lambda: given_back.append(True))
    engines = _Engines()
    housekeeping = Housekeeping(engines)
    housekeeping.after_call()
    housekeeping.run()
    assert housekeeping.rounds == 1 and not given_back
    assert housekeeping.heap_held and housekeeping.pending and not housekeeping.owed
    # Waited for until the give-back is due, counted from the last answer.
    assert GRACE_SECONDS < housekeeping.seconds_to_wait(600.0) <= GIVE_BACK_SECONDS
    housekeeping.run()  # too soon: kept
    assert not given_back and housekeeping.heap_held
    housekeeping.after_call()  # a call meanwhile: the idle time starts again, and a round is owed first
    housekeeping._last_answer -= GIVE_BACK_SECONDS
    housekeeping.run()
    assert housekeeping.rounds == 2 and not given_back  # the round, not the give-back, when both are due
    assert engines.forgotten == 0  # the reads kept for a script's next call stay until then
    housekeeping.run()
    assert given_back == [True] and not housekeeping.heap_held and not housekeeping.pending
    assert engines.forgotten == 1
    assert housekeeping.seconds_to_wait(600.0) == 600.0  # at rest: the idle time
