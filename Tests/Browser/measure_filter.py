"""Time to filter a large session in the web view, measured in the page with performance.now()
(the page's own applyFilter: the whole list filtered and the visible window redrawn).

    measure_filter.py URL SESSION [ROUNDS]

Loads the session's messages page, waits until every message is loaded, then applies and clears
a profile filter, a free-text filter and a document filter ROUNDS times each; prints the
median and the worst of each."""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402


def main():
    url, session = sys.argv[1], int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    browser = Browser()
    try:
        browser.navigate(f"{url}#/s/{session}/messages")
        total = browser.wait_for("document.querySelectorAll('#list .row[data-seq]').length > 0 && "
                                 "blipscope.state.session && blipscope.state.rows.length >= blipscope.state.session.total "
                                 "&& blipscope.state.rows.length", "every message loaded", timeout=300)
        rendered = browser.evaluate("document.querySelectorAll('#list .row').length")
        print(f"{total} messages loaded, {rendered} rows in the page")
        cases = [("profile=rev", "blipscope.state.filter.profile = 'rev'", "blipscope.state.filter.profile = ''"),
                 ("text 'doc-0421'", "blipscope.state.filter.q = 'doc-0421'", "blipscope.state.filter.q = ''"),
                 ("errors only", "blipscope.state.filter.error = true", "blipscope.state.filter.error = false")]
        for name, apply, clear in cases:
            times, shown = [], None
            for _ in range(rounds):
                times.append(browser.evaluate(f"{apply}; blipscope.applyFilter(); blipscope.state.lastFilterMs"))
                shown = browser.evaluate("blipscope.state.view.length")
                times.append(browser.evaluate(f"{clear}; blipscope.applyFilter(); blipscope.state.lastFilterMs"))
            print(f"{name}: {shown} of {total} shown; filter+redraw median {statistics.median(times):.1f} ms, "
                  f"worst {max(times):.1f} ms over {len(times)}")
        scroll = browser.evaluate("(() => { const l = document.getElementById('list'); const t0 = performance.now();"
                                  " for (let i = 0; i < 50; i++) { l.scrollTop = i * 20000; blipscope.state && l.dispatchEvent(new Event('scroll')); }"
                                  " return (performance.now() - t0) / 50; })()")
        print(f"scroll to a new window: {scroll:.2f} ms each (50 jumps)")
    finally:
        browser.close()


if __name__ == "__main__":
    main()
