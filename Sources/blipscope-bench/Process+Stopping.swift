import Foundation

extension Process {
    /// Sends `signal` (SIGINT by default) and waits up to `seconds` for the process to end; past
    /// that, kills it (SIGKILL) and waits for that. A child that does not end on its signal must
    /// not hold the bench (and its report, still unprinted) forever. Returns false when it had to
    /// be killed.
    @discardableResult
    func stopAndWait(_ signal: Int32 = SIGINT, within seconds: Double = 30) -> Bool {
        if isRunning { kill(processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning, Date() < deadline { usleep(10_000) }
        let ended = !isRunning
        if !ended { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
        return ended
    }
}
