"""Uploads on /ci, /ladder, /compare and /approve in a real browser (issue 24, "uploads on every page").

FilePond (Panel's FileDropper) calls a file "Upload complete" in green once its bytes are sent,
whatever the server makes of them.  Here: a refused file shows "File refused" and the reason in
FilePond's error colour, the message beside the drop area names every bad cell (up to 10), and a
good file afterwards shows "Upload complete" in green again.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.ui

RED, GREEN = "rgb(196, 78, 71)", "rgb(54, 151, 99)"  # FilePond's error and complete colours

#: page, ready selector, upload class, error selector, a bad file, the cells it must name, a good file
CASES = {
    "ladder": ("/ladder", ".ladder-score", "ladder-upload", ".ladder-error .md-error",
               "a,b\n0,1\n0.5,oops\nx,1\n1,2\n", ["line 3, column 2 (b)", "line 4, column 1 (a)",
                                                   "line 5, column 2 (b)"], "a,b\n0,1\n1,0\n0,0\n"),
    "compare": ("/compare", ".compare-conclusion", "compare-upload", ".compare-error .md-error",
                "a,b\n0.9,x\n0.8,0.7\ninf,y\n", ["line 2, column 2", "line 4, column 1", "line 4, column 2"],
                "a,b\n0.9,0.8\n0.91,0.7\n0.93,0.8\n"),
    "ci": ("/ci", ".ci-labels", "ci-upload", ".ci-trace-error .md-error",
           "commit,n,o,d\na,abc,0.7,0.1\nb,0.8,7,0.1\nc,2,0.7,0.1\n",
           ["line 2, column 'n'", "line 4, column 'n'", "line 3, column 'o'"],
           "commit,n,o,d\na,0.8,0.7,0.1\nb,0.9,0.8,0.05\n"),
    "approve": ("/approve", ".approve-count", "approve-upload", ".md-error",
                "orig,m1\n1,0.5\n1,oops\nnan,1\n", ["line 3, column 2", "line 4, column 1"],
                "orig,m1,m2\n1.0,0.5,1.1\n1.0,0.4,0.9\n1.0,0.6,1.1\n"),
}


def _status(page, upload: str) -> tuple[str, str, str]:
    """(main status text as drawn, the reason drawn under it, panel colour) of the drop area's file."""
    item = page.locator(f".{upload} .filepond--item").first
    expect(item).to_have_attribute("data-filepond-item-state", "processing-complete", timeout=30_000)
    return item.evaluate("""item => {
        const main = item.querySelector('.filepond--file-status-main');
        const sub = item.querySelector('.filepond--file-status-sub');
        const after = (el) => getComputedStyle(el, '::after').content;
        const shown = (el) => { const a = after(el); return a && a !== 'none' && a !== 'normal'
                                                     ? JSON.parse(a) : el.textContent; };
        return [shown(main), after(sub), getComputedStyle(item.querySelector('.filepond--panel-center'))
                                         .backgroundColor];
    }""")


def _settled(page, upload: str, done, seconds: float = 30.0):
    """The drop area's state once ``done(state)`` (polled: the page decides after reading the file)."""
    for _ in range(int(seconds * 10)):
        state = _status(page, upload)
        if done(state):
            return state
        page.wait_for_timeout(100)
    return state


@pytest.mark.parametrize("name", list(CASES))
def test_a_refused_upload_says_so_in_the_drop_area(name, page, server, open_page, relevant_errors, tmp_path):
    path, ready, upload, error, bad, cells, good = CASES[name]
    open_page(page, server, path, ready)
    bad_file = tmp_path / "bad.csv"
    bad_file.write_text(bad)
    page.locator(f".{upload} input[type=file]").first.set_input_files(str(bad_file))
    message = page.locator(error).first
    expect(message).to_contain_text(cells[0], timeout=30_000)
    text = message.inner_text()
    assert all(cell in text for cell in cells), text          # every bad cell named, in one message
    main, sub, colour = _settled(page, upload, lambda state: state[0] == "File refused" and state[2] == RED)
    assert (main, colour) == ("File refused", RED)
    assert sub == '"see the message below"'                 # the message beside it names the cells

    good_file = tmp_path / "good.csv"
    good_file.write_text(good)
    page.locator(f".{upload} input[type=file]").first.set_input_files(str(good_file))
    main, _, colour = _settled(page, upload, lambda state: state[2] == GREEN)
    assert (main, colour) == ("Upload complete", GREEN)
    assert relevant_errors(page.console_errors) == []
