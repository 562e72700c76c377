"""A small driver for headless Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages separated by NUL on file descriptors 3 and 4), so that
nothing but Python's standard library is needed. Every wait is bounded, by limits meant to catch
a hang rather than to time the browser: the tests run beside hundreds of others on two cores."""

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Failure(Exception):
    pass


class Browser:
    def __init__(self, width=1400, height=860):
        path = find_chromium()
        if path is None:
            raise Failure("chromium is not installed")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="blipscope-chromium-")

        def child_fds():
            # Through spare numbers first: a pipe end may already be 3 or 4 (close-on-exec).
            os.dup2(to_browser_read, 100)
            os.dup2(from_browser_write, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.process = subprocess.Popen(
            [path, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
             "--no-first-run", "--no-default-browser-check", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            preexec_fn=child_fds, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.errors = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Runtime.enable", session=True)
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def close(self):
        try:
            self.process.kill()
            self.process.wait(timeout=10)
        except Exception:
            pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Failure("the browser did not answer in time")
            ready, _, _ = select.select([self.from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise Failure("the browser exited")
                self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=120):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise Failure(f"{method}: {answer['error']}")
                return answer.get("result", {})
            method_name = answer.get("method", "")
            if method_name == "Runtime.exceptionThrown":
                details = answer["params"]["exceptionDetails"]
                self.errors.append(details.get("exception", {}).get("description") or details.get("text"))
            self.events.append(answer)

    def evaluate(self, expression, timeout=120):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           session=True, timeout=timeout)
        if "exceptionDetails" in result:
            raise Failure(f"{expression[:80]}: {result['exceptionDetails'].get('text')} "
                          f"{result['exceptionDetails'].get('exception', {}).get('description', '')}")
        return result["result"].get("value")

    def navigate(self, url):
        self.call("Page.navigate", {"url": url}, session=True)

    def wait_for(self, expression, what, timeout=120):
        """Polls `expression` (JavaScript) until it is truthy; fails naming `what` after `timeout` s."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = self.evaluate(expression)
            except Failure as error:
                last = str(error)
            if last:
                return last
            time.sleep(0.1)
        raise Failure(f"timed out waiting for {what} (last value {last!r}; page errors {self.errors})")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
