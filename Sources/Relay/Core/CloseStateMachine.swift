import BLIPNIO

/// How a session's connections close (wire-format reference §7), as a pure state machine.
///
/// - A CLOSE from either side is passed on to the other as the bytes it arrived as, once; when
///   both sides have sent one, both connections are closed; until then the close timeout runs.
/// - A TCP drop without CLOSE on one side drops the other side's TCP too, so each peer sees what
///   a direct peer would have (1006).
/// - The relay's own reason (``fail(_:awaitingReplies:)``) sends its own CLOSE with the reason's
///   code to each side that has not had one; the connections close once both sides answered, or
///   at the close timeout. Code 1006 is a drop without CLOSE.
struct CloseStateMachine {
    enum Action: Equatable {
        /// Pass the CLOSE just received on to `side` (the received bytes) and flush.
        case passOn(to: SessionSide)
        /// Send the relay's own CLOSE to `side` and flush.
        case sendClose(to: SessionSide, code: UInt16, reason: String)
        case armTimeout
        case cancelTimeout
        /// Flush and close both connections.
        case closeBoth
        /// Drop `side`'s connection now.
        case drop(SessionSide)
        case finished
    }

    /// What each side sent: its CLOSE, or ``WebSocketClose/abnormal`` for a drop.
    private(set) var received: [WebSocketClose?] = [nil, nil]
    private(set) var relayError: RelayError?
    private(set) var isFinished = false
    /// A CLOSE was written to the side.
    private var sent = [false, false]
    private var gone = [false, false]
    /// The relay dropped the side because the other side dropped first (a drop passed on): its
    /// connection's end is the relay's doing, not something that side sent.
    private var droppedByRelay = [false, false]
    private var timerArmed = false
    /// Both connections are being closed already (after their CLOSE went out).
    private var closingBoth = false

    /// True once nothing more is forwarded: the relay is closing for its own reason.
    var isClosingForRelay: Bool { relayError != nil }

    /// `side` sent a CLOSE (its payload read as `close`).
    mutating func closeReceived(from side: SessionSide, _ close: WebSocketClose, otherAttached: Bool) -> [Action] {
        var actions: [Action] = []
        if received[side.rawValue] == nil { received[side.rawValue] = close }
        if otherAttached, !sent[side.other.rawValue] {
            sent[side.other.rawValue] = true
            actions.append(.passOn(to: side.other))
        }
        actions += settle()
        return actions
    }

    /// The relay ends the session for `error`. `attached`: the sides whose hop exists.
    mutating func fail(_ error: RelayError, attached: [SessionSide], awaitingReplies: Bool = true) -> [Action] {
        guard relayError == nil, !isFinished else { return [] }
        relayError = error
        if error.closeCode == 1006 { return closeBoth() }
        var actions: [Action] = []
        for side in attached where !sent[side.rawValue] {
            sent[side.rawValue] = true
            actions.append(.sendClose(to: side, code: error.closeCode, reason: "blipscope: " + error.description))
        }
        guard awaitingReplies else { return actions + closeBoth() }
        return actions + settle()
    }

    /// The close timeout fired.
    mutating func timedOut() -> [Action] {
        timerArmed = false
        if relayError == nil, received[0] == nil || received[1] == nil { relayError = RelayError(.closeTimeout) }
        return closeBoth()
    }

    /// `side`'s connection is gone. `otherExists`: the other side's channel was ever opened.
    mutating func connectionClosed(_ side: SessionSide, otherExists: Bool) -> [Action] {
        gone[side.rawValue] = true
        if received[side.rawValue] == nil && relayError == nil && !droppedByRelay[side.rawValue] {
            received[side.rawValue] = .abnormal
        }
        var actions: [Action] = []
        if !gone[side.other.rawValue], otherExists, relayError == nil, !closingBoth {
            // A drop without CLOSE is passed on as a drop; when the relay itself is closing,
            // ``Action/closeBoth`` closes the other side once its CLOSE is written.
            droppedByRelay[side.other.rawValue] = true
            actions.append(.drop(side.other))
        }
        if gone[side.other.rawValue] || !otherExists { actions += finish() }
        return actions
    }

    private mutating func closeBoth() -> [Action] {
        closingBoth = true
        return [.closeBoth]
    }

    private mutating func settle() -> [Action] {
        if received[0] != nil && received[1] != nil { return closeBoth() }
        guard !timerArmed else { return [] }
        timerArmed = true
        return [.armTimeout]
    }

    private mutating func finish() -> [Action] {
        guard !isFinished else { return [] }
        isFinished = true
        var actions: [Action] = [.finished]
        if timerArmed {
            timerArmed = false
            actions.insert(.cancelTimeout, at: 0)
        }
        return actions
    }
}
