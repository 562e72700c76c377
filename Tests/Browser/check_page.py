"""Loads the web view in headless Chromium while traffic flows and checks the rendered page:
the sessions appear (with the checkpoint loop's findings badge), a live session's messages
stream in, a filter narrows them, a message's detail shows its decoded JSON, a document's
timeline opens, the flow diagram draws, Sync Gateway's lines stand beside their requests, the
finding cites its message.

    check_page.py URL LIVE_SESSION LOOP_SESSION [--screenshots DIR]

Prints `need-traffic` when it wants more messages in the live session (the test then writes a
document on the gateway), `PASS` at the end; exits 1 with `FAIL: …` otherwise. Every wait is
bounded."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, Failure  # noqa: E402


def main():
    url, live, loop = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    shots = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--screenshots" else None
    browser = Browser()

    def shot(name):
        if shots:
            browser.screenshot(os.path.join(shots, name))

    try:
        # Sessions: both appear, the loop's row carries its findings badge.
        browser.navigate(url)
        browser.wait_for(f"document.querySelector('#sessions tr.session[data-id=\"{live}\"]') !== null", "the live session row")
        browser.wait_for(f"(document.querySelector('#sessions tr.session[data-id=\"{loop}\"] .badge') || {{}}).textContent"
                         f"?.includes('checkpointConflictLoop')", "the checkpoint loop's findings badge")
        shot("web-sessions.png")

        # Messages stream in.
        browser.evaluate(f"location.hash = '#/s/{live}/messages'")
        browser.wait_for("document.querySelectorAll('#list .row[data-seq]').length > 0", "message rows")
        before = browser.evaluate("blipscope.state.rows.length")
        print("need-traffic", flush=True)
        browser.wait_for(f"blipscope.state.rows.length > {before} && "
                         "blipscope.state.rows.some(r => (r.docs || []).includes('streamed-doc'))",
                         "messages streamed in after the page opened", timeout=120)

        # A filter narrows them.
        total = browser.evaluate("blipscope.state.rows.length")
        browser.evaluate("const s = document.getElementById('f-profile'); s.value = 'rev'; s.dispatchEvent(new Event('change')); true")
        browser.wait_for("document.querySelectorAll('#list .row[data-seq]').length > 0 && "
                         "[...document.querySelectorAll('#list .row[data-seq]')].every(r => r.children[5].textContent === 'rev')",
                         "only rev rows after filtering")
        shown = browser.evaluate("blipscope.state.view.length")
        if not 0 < shown < total:
            raise Failure(f"the rev filter shows {shown} of {total}")
        if f"{shown} of" not in browser.evaluate("document.getElementById('count').textContent"):
            raise Failure("the count does not say how many are shown")

        # A message's detail shows its decoded JSON.
        browser.evaluate("[...document.querySelectorAll('#list .row[data-seq]')].find(r => r.children[3].textContent.startsWith('MSG')).click(); true")
        browser.wait_for("document.querySelector('#detail #body-json') !== null && "
                         "document.querySelector('#detail #body-json').textContent.includes('\"name\"')",
                         "the rev's body as JSON")
        browser.wait_for("document.querySelector('#detail table.props') !== null && "
                         "document.querySelector('#detail table.props').textContent.includes('rev')", "the rev's properties")
        browser.wait_for("document.querySelector('#detail #linked') !== null", "the link to its reply")
        shot("web-messages.png")

        # The frames and ACKs that carried a message: the large document's rev takes several.
        browser.evaluate("(() => { const seq = blipscope.state.rows.find(r => r.p === 'rev' && r.ty === 'MSG' && "
                         "(r.docs || []).includes('bulk-large')).i; "
                         f"location.hash = '#/s/{live}/m/' + seq; return true; }})()")
        browser.wait_for("document.querySelectorAll('#carriage tr.frame').length > 1 && "
                         "document.querySelector('#carriage tr.frame').textContent.includes('MoreComing') && "
                         "document.querySelector('#carriage').open", "the frames that carried the large rev")
        browser.evaluate("document.getElementById('carriage').scrollIntoView(); true")
        shot("web-message-frames.png")

        # The document filter finds a document beyond the first 8 a changes row carries.
        browser.evaluate("(() => { blipscope.state.filter.profile = ''; const d = document.getElementById('f-doc'); "
                         "d.value = 'bulk-12'; d.dispatchEvent(new Event('input')); return true; })()")
        browser.wait_for("blipscope.state.view.some(i => blipscope.state.rows[i].p === 'changes') && "
                         "blipscope.state.view.every(i => blipscope.state.rows[i].p !== 'subChanges')",
                         "the changes batch naming bulk-12 among the filtered rows")
        browser.evaluate("(() => { const d = document.getElementById('f-doc'); d.value = ''; d.dispatchEvent(new Event('input')); "
                         "const s = document.getElementById('f-profile'); s.value = 'rev'; s.dispatchEvent(new Event('change')); "
                         "return true; })()")

        # A document's timeline opens from a document ID.
        browser.evaluate("document.querySelector('#detail a.doc').click(); true")
        browser.wait_for("document.querySelectorAll('#timeline tr.event').length > 0", "the document's timeline")
        browser.wait_for("[...document.querySelectorAll('#timeline tr.event')].some(r => r.classList.contains('revSent'))",
                         "a revSent event in the timeline")
        shot("web-document.png")

        # The flow diagram.
        browser.evaluate("blipscope.state.filter.profile = ''; true")
        browser.evaluate(f"location.hash = '#/s/{live}/flow'")
        browser.wait_for("document.querySelectorAll('svg.flow g.arrow').length > 3", "the flow diagram's arrows")
        shot("web-flow.png")

        # Sync Gateway's lines (the gateway writes SG's log format): the session's tab lists them,
        # a line about a request links to it, and that message's detail shows the line.
        browser.evaluate(f"location.hash = '#/s/{live}/sglog'")
        browser.wait_for("document.querySelector('#tab-sglog') !== null && "
                         "document.querySelectorAll('#sglog tr.sgline').length > 0 && "
                         "document.querySelector('#sglog tr.sgline a') !== null", "Sync Gateway's lines with links to their requests")
        line = browser.evaluate("document.querySelector('#sglog tr.sgline a').closest('tr').querySelector('td.line').textContent")
        if "Type:" not in line:
            raise Failure(f"a linked line is not a handled request's: {line}")
        shot("web-sglog.png")
        browser.evaluate("document.querySelector('#sglog tr.sgline a').click(); true")
        browser.wait_for(f"(document.querySelector('#sglog-detail') || {{}}).textContent?.split('\\n').includes({line!r})",
                         "the request's detail with SG's line")

        # The finding, and the message it cites.
        browser.evaluate(f"location.hash = '#/s/{loop}/findings'")
        browser.wait_for("document.querySelector('.finding-card.checkpointConflictLoop a.cite') !== null",
                         "the checkpoint loop finding with its message link")
        shot("web-findings.png")
        browser.evaluate("document.querySelector('.finding-card.checkpointConflictLoop a.cite').click(); true")
        browser.wait_for("(document.querySelector('#detail h3') || {}).textContent?.includes('setCheckpoint')",
                         "the cited setCheckpoint's detail")

        if browser.errors:
            raise Failure(f"page errors: {browser.errors}")
        print("PASS", flush=True)
        return 0
    except Failure as failure:
        print(f"FAIL: {failure}", flush=True)
        return 1
    finally:
        browser.close()


if __name__ == "__main__":
    sys.exit(main())
