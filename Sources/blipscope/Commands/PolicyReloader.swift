import Dispatch
import Foundation
import Logging
import Policy

/// Keeps `relay --policy FILE` current: reloads on SIGHUP, and polls the file once a second with
/// a `DispatchSourceTimer` (on its own serial queue, off the event loops), reloading when its
/// bytes changed. A broken file is logged once and the previous policy stays in force; live
/// sessions keep running either way.
final class PolicyReloader: @unchecked Sendable {
    private let store: PolicyStore
    private let logger: Logger
    private let queue = DispatchQueue(label: "blipscope.policy-reload")
    // Touched only on `queue` (and in start/stop before/after it runs).
    private var timer: DispatchSourceTimer?
    private var hangup: DispatchSourceSignal?

    init(store: PolicyStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func start() {
        signal(SIGHUP, SIG_IGN)  // delivered to the dispatch source instead of ending the process
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: queue)
        hangup.setEventHandler { [self] in reload(force: true) }
        hangup.resume()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [self] in reload(force: false) }
        timer.resume()
        queue.sync {
            self.hangup = hangup
            self.timer = timer
        }
    }

    func stop() {
        queue.sync {
            timer?.cancel()
            hangup?.cancel()
        }
    }

    private func reload(force: Bool) {
        do {
            if force {
                let count = try store.reload()
                logger.info("policy reloaded (\(count) rules)")
            } else if let count = try store.reloadIfChanged() {
                logger.info("policy reloaded (\(count) rules)")
            }
        } catch {
            logger.warning("policy rejected: \(error); keeping the previous policy")
        }
    }
}
