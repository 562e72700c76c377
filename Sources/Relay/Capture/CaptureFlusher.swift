import Foundation
import Logging

/// The one background thread that does a ``CaptureObserver``'s file I/O, so event loops never
/// block on the disk (ARCHITECTURE.md "Observers").
///
/// - Flushes a session when its writer reports a flush is due or its records overflowed
///   (``schedule(_:)``), and every session with buffered records every ``interval``: a crash loses
///   at most that long's worth of records (plus what the OS had not written).
/// - Closes sessions handed to ``close(_:)`` after writing what is left of them.
/// - ``finish()`` closes every session still open and stops the thread.
/// - One thread for all sessions: a slow disk slows every session's capture alike.
final class CaptureFlusher: @unchecked Sendable {
    private let interval: TimeInterval
    private let logger: Logger
    private let condition = NSCondition()
    private var open: [UInt64: SessionCapture] = [:]
    private var due: [UInt64: SessionCapture] = [:]
    private var closing: [SessionCapture] = []
    private var stopping = false
    private var stopped = false
    private var finishWaiters: [CheckedContinuation<Void, Never>] = []
    private var started = false
    /// Told, on this thread, what each flush or close wrote and dropped (the capture metrics).
    var progress: (@Sendable (CaptureProgress) -> Void)?

    init(interval: TimeInterval, logger: Logger) {
        self.interval = interval
        self.logger = logger
    }

    /// Starts the thread (once).
    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return }
        started = true
        let thread = Thread { [self] in run() }
        thread.name = "blipscope-capture"
        thread.start()
    }

    func add(_ capture: SessionCapture) {
        condition.lock()
        open[capture.sessionID] = capture
        condition.unlock()
    }

    /// Flush `capture` soon.
    func schedule(_ capture: SessionCapture) {
        condition.lock()
        due[capture.sessionID] = capture
        condition.signal()
        condition.unlock()
    }

    /// Write out and close `capture`.
    func close(_ capture: SessionCapture) {
        condition.lock()
        open[capture.sessionID] = nil
        due[capture.sessionID] = nil
        closing.append(capture)
        condition.signal()
        condition.unlock()
    }

    /// Closes every session and stops the thread; returns once all is written.
    func finish() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if stopped || !started {
                stopped = true
                condition.unlock()
                continuation.resume()
                return
            }
            stopping = true
            finishWaiters.append(continuation)
            condition.signal()
            condition.unlock()
        }
    }

    private func run() {
        var nextTick = Date(timeIntervalSinceNow: interval)
        while true {
            condition.lock()
            while due.isEmpty && closing.isEmpty && !stopping {
                if !condition.wait(until: nextTick) { break }
            }
            var work = due
            due.removeAll()
            if Date() >= nextTick {
                for (id, capture) in open where capture.writer.bufferedBytes > 0 { work[id] = capture }
                nextTick = Date(timeIntervalSinceNow: interval)
            }
            var toClose = closing
            closing.removeAll()
            let stop = stopping
            if stop {
                toClose += open.values
                open.removeAll()
                work.removeAll()
            }
            condition.unlock()

            for capture in work.values { drain(capture) }
            for capture in toClose { closeCapture(capture) }
            if stop {
                condition.lock()
                let more = !closing.isEmpty || !due.isEmpty
                if !more {
                    stopped = true
                    let waiters = finishWaiters
                    finishWaiters.removeAll()
                    condition.unlock()
                    for waiter in waiters { waiter.resume() }
                    return
                }
                condition.unlock()
            }
        }
    }

    private func drain(_ capture: SessionCapture) {
        defer { report(capture) }
        do {
            while true {
                let (behind, reported) = try capture.drain()
                if reported > 0 { warnDropped(capture, count: reported) }
                if !behind { break }
            }
        } catch {
            logger.error("capture of session \(capture.sessionID) stopped: \(error)")
        }
    }

    private func closeCapture(_ capture: SessionCapture) {
        defer { report(capture) }
        do {
            let reported = try capture.close()
            if reported > 0 { warnDropped(capture, count: reported) }
        } catch {
            logger.error("capture of session \(capture.sessionID) could not be completed: \(error)")
        }
    }

    /// Hands what `capture` wrote and dropped since its last report to ``progress``.
    private func report(_ capture: SessionCapture) {
        guard let progress else { return }
        let delta = capture.takeProgress()
        if delta != CaptureProgress() { progress(delta) }
    }

    private func warnDropped(_ capture: SessionCapture, count: UInt64) {
        logger.warning("capture of session \(capture.sessionID) dropped \(count) records: the disk did not keep up (--capture-overflow=drop); \(capture.droppedRecords) in all")
    }
}
