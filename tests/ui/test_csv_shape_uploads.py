"""Issue 31 on the pages (no login needed): a CSV upload shaped to cost more than its size is refused.

Each page that reads a file a person gives (/ladder, /compare, /ci, /approve, /session) gets a
header of 12,000 empty fields above narrow rows and a file with a 1 MiB row; the page shows
the message naming the row and the limit, and the server's peak resident memory (VmHWM after
``clear_refs``, on a server of its own) grows by a bounded amount.  Before, /session took
the wide header for 5 s and 430 MiB and accepted it; /ci spent 180 MiB refusing it.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.testsets.attacks import MIB, Memory
from tests.testsets.serving import Server

#: page -> (upload area, message, header, a valid row with {i})
PAGES = {
    "ladder": (".ladder-upload", ".ladder-error", "s1,s2", "0,1"),
    "compare": (".compare-upload", ".compare-error", "a,b", "0.5,0.6"),
    "ci": (".ci-upload", ".ci-trace-error", "commit,n,o,d", "c{i},0.5,0.5,0.1"),
    "approve": (".approve-upload", ".md-error", "orig,m1", "0,1"),
    "session": (".trace-upload", ".trace-error", "step,val_accuracy,test_accuracy", "{i},0.5,0.5"),
}
WORD = {"session": "row"}


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("shape-pages")
    server = Server(f"sqlite:///{root / 'store.sqlite'}", root, pages=",".join(PAGES))
    yield server
    server.stop()


@pytest.mark.parametrize("kind", ["wide header", "1 MiB row"])
@pytest.mark.parametrize("name", PAGES)
def test_an_upload_shaped_to_cost_more_than_its_size_is_refused_by_the_page(page, own_server, open_page, tmp_path,
                                                                              name, kind):
    area, message, header, row = PAGES[name]
    word = WORD.get(name, "line")
    if kind == "wide header":
        content = header + "," * 12_000 + "\n" + "".join(row.format(i=i) + "\n" for i in range(2000))
        needle = f"{word} 2: row must be as wide as {word} 1"
    else:
        content = header + "\n" + row.format(i=0) + "\n" + "0," * (MIB // 2) + "\n"
        needle = f"{word} 3: row must be at most 262,144 bytes long (256 KiB); got 1,048,576 bytes"
    path = tmp_path / "shaped.csv"
    path.write_text(content, encoding="utf-8")
    open_page(page, own_server.base, f"/{name}", area)
    memory = Memory(own_server.proc.pid)
    memory.reset()
    page.locator(f"{area} input[type=file]").first.set_input_files(str(path))
    expect(page.locator(message).first).to_contain_text(needle, timeout=60_000)
    growth = memory.growth()
    assert growth <= 48 * MIB + 16 * len(content), f"{growth / MIB:.1f} MiB"
    print(f"/{name}, {kind} ({len(content) / 1024:.0f} KiB): refused, server peak memory growth {growth / MIB:.1f} MiB")
