"""GuardedFileDropper: the upload bounded in the browser and chunk by chunk on the server (issue 15 #5)."""
from __future__ import annotations

from types import SimpleNamespace

from meter_dashboard.ui.upload import STATUS_CSS, GuardedFileDropper


def chunk(name, i, total, data, event="upload_event"):
    return SimpleNamespace(event_name=event, data={"name": name, "chunk": i, "total_chunks": total, "data": data,
                                                   "type": "text/csv"})


def test_the_browser_is_told_the_limit_before_sending():
    drop = GuardedFileDropper(parameter="trace", max_bytes=10 * 1024 * 1024)
    assert drop.max_file_size == "10486KB" and drop.chunk_size == 512 * 1024 and not drop.multiple
    model = drop.get_root()  # the server-side limits are not sent to the browser
    assert model.max_file_size == "10486KB" and not hasattr(model, "max_bytes")


def test_refused_at_the_first_chunk_past_the_limit_and_nothing_kept():
    drop = GuardedFileDropper(parameter="trace", max_bytes=2_000, chunk_size=1_000)
    drop._process_event(chunk("big.csv", 1, 40, b"x" * 1000))
    assert drop.upload_error.startswith("trace must be a file of at most 2 KiB; got 'big.csv', more than")
    assert drop.value == {} and drop._upload.buffered == 0
    for i in range(2, 41):  # the browser keeps sending: ignored, never buffered
        drop._process_event(chunk("big.csv", i, 40, b"x" * 1000))
    assert drop.value == {} and drop._upload.buffered == 0


def test_a_complete_file_replaces_the_last_one():
    drop = GuardedFileDropper(parameter="trace", max_bytes=10_000, chunk_size=1_000)
    seen = []
    drop.param.watch(lambda e: seen.append(dict(e.new)), "value")
    drop._process_event(chunk("a.csv", 1, 2, b"a" * 1000))
    assert drop.received == 1000 and drop.value == {}
    drop._process_event(chunk("a.csv", 2, 2, b"b" * 5))
    assert drop.value == {"a.csv": b"a" * 1000 + b"b" * 5} and drop.received == 0 and drop.upload_error == ""
    drop._process_event(chunk("b.csv", 1, 1, b"c"))
    assert drop.value == {"b.csv": b"c"} and len(seen) == 2  # only the latest file is held
    drop._process_event(chunk("b.csv", 1, 1, None, event="delete_event"))
    drop._process_event(SimpleNamespace(event_name="upload_event", data={"name": "x"}))
    assert "arrived damaged" in drop.upload_error


def test_the_drop_area_says_what_became_of_the_file():
    # issue 24: FilePond shows a green "Upload complete" once the bytes are sent, whatever the server made of them
    drop = GuardedFileDropper(parameter="trace", max_bytes=10_000, chunk_size=1_000, checked=True,
                              css_classes=["my-upload"])
    drop._process_event(chunk("a.csv", 1, 2, b"a" * 1000))
    assert drop.status == "receiving" and drop.css_classes == ["my-upload", "md-upload-receiving"]
    drop._process_event(chunk("a.csv", 2, 2, b"b"))
    assert drop.status == "checking" and "md-upload-checking" in drop.css_classes  # not green before the page read it
    drop.refuse("line 3, column 2 (b): loss must be a number in [0, 1]; got 'oops'")
    assert drop.status == "refused" and drop.css_classes == ["my-upload", "md-upload-refused"]
    assert drop.upload_error.startswith("line 3, column 2 (b)") and drop.stylesheets == [STATUS_CSS]
    drop._process_event(chunk("b.csv", 1, 1, b"c"))
    assert drop.status == "checking" and drop.css_classes == ["my-upload", "md-upload-checking"]
    drop.accept()
    assert drop.status == "accepted" and drop.upload_error == "" and "md-upload-accepted" in drop.css_classes


def test_a_file_refused_while_it_arrives_stays_refused():
    drop = GuardedFileDropper(parameter="trace", max_bytes=2_000, chunk_size=1_000, checked=True)
    drop._process_event(chunk("big.csv", 1, 3, b"x" * 1000))
    drop._process_event(chunk("big.csv", 2, 3, b"x" * 1000))
    drop._process_event(chunk("big.csv", 3, 3, b"x" * 1000))  # past the limit: refused
    assert drop.status == "refused" and "at most" in drop.upload_error
    assert drop.value == {}


def test_unchecked_drops_accept_a_whole_file_at_once():
    drop = GuardedFileDropper(parameter="trace", max_bytes=10_000, chunk_size=1_000)
    drop._process_event(chunk("a.csv", 1, 1, b"a"))
    assert drop.status == "accepted" and drop.value == {"a.csv": b"a"}
