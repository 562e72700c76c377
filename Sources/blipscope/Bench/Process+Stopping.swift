import Foundation

extension Process {
    /// Sends SIGINT and waits up to `seconds` for the process to end; past that, kills it
    /// (SIGKILL) and waits for that. A child that does not end on SIGINT must not hold the bench
    /// (and its report, still unprinted) forever. Returns false when it had to be killed.
    @discardableResult
    func interruptAndWait(within seconds: Double = 30) -> Bool {
        interrupt()
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning, Date() < deadline { usleep(10_000) }
        let ended = !isRunning
        if !ended { kill(processIdentifier, SIGKILL) }
        waitUntilExit()
        return ended
    }
}
