"""A Python peer SIGKILLed while its round's all-reduce is in flight: the other two finish that
round on a retry without it and hold the same state after it and after the rounds that follow.

The victim's upload is emulated at 120 kbit/s, so an all-reduce with it lasts seconds (its
update, ~110 KB in int8, crosses its link); the kill comes as soon as the tracker's status shows
a round running with the victim in it, and the tracker's log must then show that round's first
attempt aborted: a kill that came too late fails the test rather than passing it unseen."""

import json
import signal

from conftest import python_peer, python_rounds, read_line, wait_for

SURVIVOR_ROUNDS = 8


def test_a_python_peer_killed_mid_all_reduce_leaves_the_others_identical(tracker_factory, tmp_path,
                                                                        spawn):
    tracker = tracker_factory(min_peers=2, http=True)
    slow = 'upload = "120kbit"\n'  # the victim's link: its all-reduce lasts seconds
    victim = python_peer(spawn, tracker.peer_config(tmp_path, "victim", link=slow), 1000, seed=9)
    survivors = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), SURVIVOR_ROUNDS,
                             seed=i) for i in range(2)]

    # The victim's first round committed with the others (if it joined late, its first is
    # "replaced"), then the next one running with it in the group.
    first = {"kind": None}
    while first["kind"] != "committed":
        line = read_line(victim.stdout, timeout=120)
        assert line, "the victim committed no round" + (
            f"; its log: {victim.log}")
        first = json.loads(line)
    victim_key = tracker.public_keys["victim"]

    def running_with_victim():
        status = tracker.status()
        for member in status["members"]:
            if member["public_key"] == victim_key and member["in_round"] and \
                    status["phase"].endswith("running (attempt 1)"):
                return status["next_round"]
        return None

    killed_in = wait_for(running_with_victim, timeout=120, every=0.02)
    assert killed_in, f"no round ran with the victim after round {first['round']}"
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(timeout=30) == -signal.SIGKILL

    runs = [python_rounds(p, timeout=240) for p in survivors]
    tracker_log = tracker.log.read_text()
    assert f"round {killed_in} attempt 1 aborted" in tracker_log, \
        f"the victim was not killed mid-round {killed_in}; tracker log:\n{tracker_log}"
    # Before the kill a survivor that joined after the first round formed took the run's state
    # ("replaced"); from the kill on, both commit every round, the two of them.
    by_round = [{row["round"]: row for row in run if row["kind"] != "skipped"} for run in runs]
    for rows in by_round:
        assert set(range(killed_in, killed_in + 3)) <= set(rows), "rounds after the kill"
    for r in sorted(set(by_round[0]) & set(by_round[1])):
        a, b = by_round[0][r], by_round[1][r]
        assert a["state"] == b["state"], f"round {r}: {a} {b}"
        if r >= killed_in:
            assert a["kind"] == b["kind"] == "committed", (a, b)
            assert a["members"] == b["members"] == 2, "the round finished without the victim"
