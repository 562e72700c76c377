/// When the replaying side sends its next request (`--timing`).
public enum ReplayTiming: Sendable, Hashable, CustomStringConvertible {
    /// As soon as everything it waited for in the recording has arrived again: the replies
    /// recorded before it was sent, and as many peer requests as had arrived by then.
    case dependencies
    /// At its recorded offset from the first request, divided by `speed` (1 = as recorded).
    /// Dependencies are not waited for.
    case recorded(speed: Double)

    /// Reads `deps`, `recorded` or `xN` (N > 0, e.g. `x2`, `x0.5`).
    public init?(argument: String) {
        switch argument.lowercased() {
        case "deps", "dependencies": self = .dependencies
        case "recorded": self = .recorded(speed: 1)
        case let text where text.hasPrefix("x"):
            guard let speed = Double(text.dropFirst()), speed > 0, speed.isFinite else { return nil }
            self = .recorded(speed: speed)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .dependencies: return "deps"
        case .recorded(let speed): return speed == 1 ? "recorded" : "x\(speed)"
        }
    }
}
