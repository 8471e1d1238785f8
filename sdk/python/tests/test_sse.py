"""The SSE parser against the standard's rules (no server needed)."""

from __future__ import annotations

from ephemeral._sse import LineSplitter, ServerSentEvent, SSEDecoder, decode_all
from ephemeral._streams import to_event


def feed_in_pieces(payload: bytes, size: int) -> list[ServerSentEvent]:
    splitter, decoder, out = LineSplitter(), SSEDecoder(), []
    for i in range(0, len(payload), size):
        for line in splitter.feed(payload[i : i + size]):
            event = decoder.decode(line)
            if event is not None:
                out.append(event)
    return out


def test_id_event_and_data() -> None:
    events = decode_all(b'retry: 2000\n\nid: 1\nevent: vm.ready\ndata: {"a":1}\n\n')
    assert events == [ServerSentEvent("vm.ready", '{"a":1}', "1")]
    assert to_event(events[0]).data == {"a": 1} and to_event(events[0]).id == 1


def test_multi_line_data_is_joined_with_newlines() -> None:
    events = decode_all(b"data: first\ndata: second\ndata:third\n\n")
    assert events[0].data == "first\nsecond\nthird"
    assert events[0].event == "message"


def test_comments_and_unknown_fields_are_ignored() -> None:
    events = decode_all(b": keep-alive\n\nfoo: bar\ndata: x\n: mid-event comment\n\n")
    assert [e.data for e in events] == ["x"]


def test_retry_is_recorded_only_when_numeric() -> None:
    decoder = SSEDecoder()
    for line in ["retry: 1500", ""]:
        decoder.decode(line)
    assert decoder.retry_ms == 1500
    decoder.decode("retry: soon")
    assert decoder.retry_ms == 1500


def test_cr_lf_and_crlf_all_end_lines_even_split_across_chunks() -> None:
    payload = b"id: 1\r\ndata: a\r\rid: 2\rdata: b\r\n\r\nid: 3\ndata: c\n\n"
    for size in (1, 2, 3, 7, len(payload)):
        events = feed_in_pieces(payload, size)
        assert [(e.id, e.data) for e in events] == [("1", "a"), ("2", "b"), ("3", "c")], size


def test_unicode_line_separators_inside_data_do_not_split_it() -> None:
    # httpx's iter_lines would split at U+2028, U+0085 and form feeds.
    text = "a\u2028b\u0085c\x0cd\x1ce"
    events = decode_all(b"data: " + text.encode() + b"\n\n")
    assert events[0].data == text


def test_multibyte_characters_split_across_chunks_survive() -> None:
    payload = "data: héllo ✓ 😀\n\n".encode()
    assert feed_in_pieces(payload, 1)[0].data == "héllo ✓ 😀"


def test_an_event_without_its_blank_line_is_never_dispatched() -> None:
    assert decode_all(b"id: 1\ndata: complete\n\nid: 2\ndata: cut off") == [
        ServerSentEvent("message", "complete", "1")
    ]


def test_event_without_data_is_not_dispatched_and_resets_type() -> None:
    events = decode_all(b"event: lonely\n\ndata: x\n\n")
    assert events == [ServerSentEvent("message", "x", None)]


def test_id_persists_and_nul_ids_are_ignored() -> None:
    events = decode_all(b"id: 7\ndata: a\n\ndata: b\n\nid: 8\x00\ndata: c\n\n")
    assert [e.id for e in events] == ["7", "7", "7"]


def test_leading_bom_and_single_space_rule() -> None:
    events = decode_all(b"\xef\xbb\xbfdata:  two spaces\n\n")
    assert events[0].data == " two spaces"


def test_non_json_data_is_kept() -> None:
    event = to_event(ServerSentEvent("x", "not json", "x"))
    assert event.data == {"data": "not json"} and event.id == 0
