"""A bounded fuzz run: mutated client frames over many connections never take the emulator down.

The full run (`nox -s fuzz`, 10^6 frames) reports the same figures; this one sends
20,000 and must see no crash (the emulator runs in a child process, so an abort
is counted, not fatal), no hang (a probe is answered within `PROBE_DEADLINE_S`
throughout: seconds, so that a machine busy with other work does not fail the run,
while a stuck event loop still does)
no handler traceback in the emulator's log, and an RSS within 10 % of the start.
"""

from __future__ import annotations

from pathlib import Path

from kafkatest.apps.fuzz import run_fuzz

#: What a hang is here: no answer in 5 s (the fuzz session's own default is 1 s).
PROBE_DEADLINE_S = 5.0


def test_twenty_thousand_mutated_frames_cause_no_crash_hang_or_traceback(
    tmp_path: Path,
) -> None:
    report = run_fuzz(
        frames=20_000, connections=16, seed=8, workdir=tmp_path, probe_deadline_s=PROBE_DEADLINE_S
    )
    assert report.frames_sent == 20_000
    assert (report.crashes, report.hangs, report.handler_exceptions) == (0, 0, 0), "\n".join(
        report.lines()
    )
    assert report.connections_closed > 0, "the mutations should break some requests"
    assert report.slowest_request_api is not None, "the emulator's timings were not read"
    # Nothing a frame leaves behind outgrows the state it stores (schemas are loaded first).
    assert report.rss_end_mb <= report.rss_start_mb * 1.10, "\n".join(report.lines())


def test_mutated_frames_through_the_authorization_layer_cause_no_crash_hang_or_traceback(
    tmp_path: Path,
) -> None:
    """The same with ACLs on and the corpus's client allowed part of what it recorded,
    so requests are served whole, refused whole and served in part."""
    report = run_fuzz(
        frames=10_000,
        connections=16,
        seed=9,
        workdir=tmp_path,
        acls=True,
        probe_deadline_s=PROBE_DEADLINE_S,
    )
    assert report.frames_sent == 10_000
    assert (report.crashes, report.hangs, report.handler_exceptions) == (0, 0, 0), "\n".join(
        report.lines()
    )
    assert report.rss_end_mb <= report.rss_start_mb * 1.10, "\n".join(report.lines())


def test_the_acl_fuzz_child_allows_part_of_the_corpus_and_refuses_the_rest() -> None:
    import subprocess
    import sys

    from admin_requests import request_entity
    from raw_client import ask

    from kafkatest.brokers.process import free_port, terminate

    port = free_port()
    command = [sys.executable, "-m", "kafkatest.apps.fuzz.child", "--port", str(port)]
    child = subprocess.Popen(
        [*command, "--fuzz-acls"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert child.stdout is not None
        assert "bootstrap servers" in child.stdout.readline()

        def metadata_error(topic: str) -> str:
            wanted = request_entity(
                "metadata", 12, "MetadataRequestTopic", topic_id=None, name=topic
            )
            request = request_entity(
                "metadata",
                12,
                "MetadataRequest",
                topics=(wanted,),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
            answer = ask(f"127.0.0.1:{port}", 3, 12, request)
            return str(answer.topics[0].error_code.name)

        assert metadata_error("fuzz-seed") == "unknown_topic_or_partition"  # allowed, absent
        assert metadata_error("elsewhere") == "topic_authorization_failed"
    finally:
        terminate(child)


def test_the_corpus_holds_real_frames_of_every_api_family() -> None:
    """Every connection the clients open goes through the recording proxy (the
    emulator advertises it), so the corpus is the clients' whole conversation."""
    import struct

    from kafkatest.apps.fuzz.corpus import capture_client_frames

    keys = {struct.unpack_from(">h", frame, 4)[0] for frame in capture_client_frames()}
    families = {
        "produce and fetch": {0, 1},
        "classic groups": {11, 12, 14},
        "offsets": {2, 8, 9},
        "admin": {19, 20, 21, 32, 37},
        "transactions": {22, 24, 25, 26, 28},
        "ACLs": {29, 30, 31},
        "SCRAM": {50, 51},
        "KIP-848": {68, 69},
    }
    missing = {name: sorted(want - keys) for name, want in families.items() if want - keys}
    assert missing == {}, f"frames captured for API keys {sorted(keys)}"


def test_mutated_frames_at_a_sasl_listener_before_authentication_cause_no_crash_hang_or_traceback(
    tmp_path: Path,
) -> None:
    """The same at a SASL_PLAINTEXT listener (PLAIN and both SCRAMs): requests before
    the handshake, handshakes, SaslAuthenticate and raw tokens, intact and mutated."""
    report = run_fuzz(
        frames=3_000,
        connections=8,
        seed=10,
        workdir=tmp_path,
        sasl=True,
        probe_deadline_s=PROBE_DEADLINE_S,
    )
    assert report.frames_sent == 3_000
    assert (report.crashes, report.hangs, report.handler_exceptions) == (0, 0, 0), "\n".join(
        report.lines()
    )
    assert report.connections_closed > 0, "the mutations should break some exchanges"


def test_the_fuzzed_emulator_holds_a_long_truncated_log_the_corpus_looks_up() -> None:
    """Issue 44: a ListOffsets over 20,000 one-record batches truncated near their end
    once froze every client for minutes; the fuzzed emulator starts with such a log
    and the corpus's intact frames look it up, once and a thousand times."""
    import socket
    import struct
    import subprocess
    import sys

    from raw_client import read_frame

    from kafkatest.apps.fuzz.long_log import (
        KEPT_AT_THE_END,
        LONG_LOG_BATCHES,
        long_log_frames,
    )
    from kafkatest.brokers.process import free_port, terminate

    port = free_port()
    command = [sys.executable, "-m", "kafkatest.apps.fuzz.child", "--port", str(port)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert child.stdout is not None
        assert "bootstrap servers" in child.stdout.readline()
        frames = long_log_frames()
        assert {struct.unpack_from(">h", frame, 4)[0] for frame in frames} == {2, 3}
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            for frame in frames:
                sock.sendall(frame)
                assert read_frame(sock) is not None, "the emulator closed the connection"
            # The first frame: ListOffsets, timestamp 0, one naming: the log start.
            sock.sendall(frames[0])
            reply = read_frame(sock)
        assert reply is not None
        start = LONG_LOG_BATCHES - KEPT_AT_THE_END
        assert struct.pack(">q", start) in reply  # the answer's offset
    finally:
        terminate(child)


def test_the_slowest_request_is_read_from_the_emulator_s_timings() -> None:
    from kafkatest.apps.fuzz.long_log import slowest_request

    log = (
        "fuzz: fuzz-long holds 20000 one-record batches\n"
        "kafkatest emulator: request timings (seconds; longest in ms)\n"
        "  api_key requests queued_total_s queued_max_ms handled_total_s handled_max_ms "
        "written_total_s written_max_ms idle_total_s idle_max_ms\n"
        "  2 40 0.000 0.1 0.050 12.5 0.001 0.2 1.0 300.0\n"
        "  32 3 0.000 0.1 0.090 81.8 0.001 0.2 1.0 900.0\n"
        "kafkatest emulator: stopped\n"
    )
    assert slowest_request(log) == (81.8, 32)
    assert slowest_request("no timings\n") == (0.0, None)
