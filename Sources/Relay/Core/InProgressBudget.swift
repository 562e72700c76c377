import NIOConcurrencyHelpers

/// The relay-wide bound on what mediating sessions hold of partly received messages
/// (``RelayLimits/maxRelayBytesInProgress``). Each mediating session charges what its decoders
/// hold as it changes and gives it back when it ends; the session whose charge takes the total
/// past the bound is the one that ends. Pass-through sessions have their own, smaller bound
/// (``RelayLimits/maxDecoderBytesInProgress``), past which they only stop decoding.
///
/// Thread-safe: sessions on every event loop share one.
final class InProgressBudget: Sendable {
    let limit: Int
    private let total = NIOLockedValueBox(0)

    init(limit: Int) { self.limit = limit }

    /// Adds `delta` (negative to give back); whether the total is still within the limit.
    func charge(_ delta: Int) -> Bool {
        guard delta != 0 else { return true }
        return total.withLockedValue { total in
            total += delta
            return delta < 0 || total <= limit
        }
    }

    var held: Int { total.withLockedValue { $0 } }
}
