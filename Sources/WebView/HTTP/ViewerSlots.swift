import NIOConcurrencyHelpers

/// Counts the live feeds open at once against ``WebViewLimits/maxViewers``.
public final class ViewerSlots: Sendable {
    public let limit: Int
    private let open = NIOLockedValueBox(0)

    public init(limit: Int) { self.limit = limit }

    /// Takes a slot; false when all are taken.
    public func take() -> Bool {
        open.withLockedValue { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    public func release() { open.withLockedValue { $0 = max(0, $0 - 1) } }

    public var count: Int { open.withLockedValue { $0 } }
}
