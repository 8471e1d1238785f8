"""Runs end to end against a real server with the `ephemeral/script` model."""

from __future__ import annotations

import time

import pytest
from conftest import BUDGET

import ephemeral
from ephemeral import Client, Run

FINAL_EVENTS = ("vm.destroyed", "run.succeeded", "worker.destroyed")


def test_create_wait_get(client: Client, tag: dict[str, str]) -> None:
    run = client.runs.create("echo hello\nwhoami", max_cost_micros=BUDGET, metadata=tag,
                             timeout_seconds=60, model="ephemeral/script")
    assert isinstance(run, Run)
    assert run.id.startswith("run_") and len(run.id) == 36
    assert run.status in ("queued", "running") and not run.done
    assert run.metadata == tag and run.model == "ephemeral/script"
    assert run.permissions.max_cost_micros == BUDGET and run.permissions.timeout_seconds == 60
    assert run.created_at is not None and run.created_at.tzinfo is not None

    done = client.runs.wait(run.id, timeout=60)
    assert done.succeeded and done.done
    assert done.output == "hello\nworker\n"
    assert done.isolation == "wasm"
    cost = done.cost
    assert cost.charged_micros + cost.released_micros == cost.reserved_micros == BUDGET
    assert cost.model_micros + cost.web_micros + cost.compute_micros == cost.charged_micros
    assert done.timeline is not None
    assert [e.seq for e in done.timeline] == list(range(1, len(done.timeline) + 1))
    assert done.timeline[0].type == "budget.reserved"
    assert tuple(e.type for e in done.timeline[-3:]) == FINAL_EVENTS
    assert done.timeline[0].at is not None and done.timeline[0].t_ms == 0
    assert client.runs.get(run.id) == done


def test_files_go_into_the_scratch_folder(client: Client) -> None:
    run = client.runs.create("cat notes.txt\nod -An -tx1 blob.bin", max_cost_micros=BUDGET,
                             files={"notes.txt": "text here\n", "blob.bin": b"\x00\xff"})
    done = client.runs.wait(run.id, timeout=60)
    assert done.output is not None
    assert done.output.startswith("text here\n") and "00 ff" in done.output
    assert done.permissions.files == ["notes.txt", "blob.bin"]


def test_shell_off_runs_nothing(client: Client) -> None:
    run = client.runs.wait(client.runs.create("echo x", max_cost_micros=BUDGET, shell=False).id, timeout=60)
    assert run.status == "failed" and run.error is not None and run.error.code == "shell_disabled"
    assert run.permissions.shell is False


def test_stream_yields_every_event_once_in_order(client: Client) -> None:
    with client.runs.create("echo streamed\necho twice", max_cost_micros=BUDGET, stream=True) as events:
        seen = list(events)
        assert events.id.startswith("run_")
    assert [e.id for e in seen] == list(range(1, len(seen) + 1))
    assert seen[0].type == "budget.reserved" and seen[-1].type == "worker.destroyed"
    outputs = [e.data["data"] for e in seen if e.type == "shell.output"]
    assert outputs == ["streamed\n", "twice\n"]
    assert client.runs.get(events.id).status == "succeeded"


def test_output_with_unicode_line_separators_is_not_split(client: Client) -> None:
    # printf's octal escapes write U+2028 (e2 80 a8) and NEL (c2 85).
    with client.runs.create(r"printf 'a\342\200\250b\302\205c\n'", max_cost_micros=BUDGET,
                            stream=True) as events:
        outputs = [e.data["data"] for e in events if e.type == "shell.output"]
    assert outputs == ["a\u2028b\u0085c\n"]


def test_events_replay_and_after(client: Client) -> None:
    run = client.runs.wait(client.runs.create("echo one", max_cost_micros=BUDGET).id, timeout=60)
    assert run.timeline is not None
    everything = list(client.runs.events(run.id))
    assert [(e.id, e.type) for e in everything] == [(e.seq, e.type) for e in run.timeline]
    later = list(client.runs.events(run.id, after=3))
    assert [e.id for e in later] == [e.id for e in everything[3:]]
    assert list(client.runs.events(run.id, after=everything[-1].id)) == []


def test_a_stream_can_be_left_early(client: Client) -> None:
    run = client.runs.create("sleep 2\necho late", max_cost_micros=BUDGET)
    with client.runs.events(run.id) as events:
        first = next(events)
    assert first.type == "budget.reserved"
    assert client.runs.wait(run.id, timeout=60).succeeded


def test_list_pages_and_auto_paging(client: Client, tag: dict[str, str]) -> None:
    ids = [client.runs.create(f"echo {n}", max_cost_micros=BUDGET, metadata=tag).id for n in range(5)]
    page = client.runs.list(limit=2)
    assert len(page) == 2 and page.has_more and page.next_before == page.data[-1].id
    assert all(r.timeline is None for r in page)
    newer_first = [r.id for r in client.runs.list(limit=5).data]
    assert newer_first == ids[::-1]
    after = client.runs.list(limit=2, before=ids[2])
    assert [r.id for r in after.data] == [ids[1], ids[0]]
    walked = []
    for run in client.runs.iter(page_size=2):
        walked.append(run.id)
        if len(walked) == 5:
            break
    assert walked == ids[::-1]
    every = [r.id for r in client.runs.iter(page_size=100)]
    assert len(every) == len(set(every)) and set(ids) <= set(every)
    for run_id in ids:
        client.runs.wait(run_id, timeout=60)


def test_cancel_a_running_run(client: Client) -> None:
    run = client.runs.create("sleep 60", max_cost_micros=BUDGET)
    with client.runs.events(run.id) as events:
        for event in events:
            if event.type == "shell.command":
                break
    cancelling = client.runs.cancel(run.id)
    assert cancelling.id == run.id
    done = client.runs.wait(run.id, timeout=30)
    assert done.status == "cancelled"
    assert done.timeline is not None and done.timeline[-1].type == "worker.destroyed"
    assert any(e.type == "run.cancelled" for e in done.timeline)
    with pytest.raises(ephemeral.RunFinished) as info:
        client.runs.cancel(run.id)
    assert info.value.status == 409 and isinstance(info.value, ephemeral.Conflict)


def test_wait_gives_up_at_its_timeout(client: Client) -> None:
    run = client.runs.create("sleep 30", max_cost_micros=BUDGET)
    started = time.monotonic()
    with pytest.raises(ephemeral.TimeoutError):
        client.runs.wait(run.id, timeout=1.0)
    assert time.monotonic() - started < 5
    client.runs.cancel(run.id)
    assert client.runs.wait(run.id, timeout=30).status == "cancelled"


def test_timeout_seconds_ends_a_run(client: Client) -> None:
    run = client.runs.create("sleep 30", max_cost_micros=BUDGET, timeout_seconds=1)
    assert client.runs.wait(run.id, timeout=30).status == "timed_out"
