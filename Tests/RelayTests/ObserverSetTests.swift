import BLIPCore
import NIOCore
import Testing
@testable import Relay

/// Messages reach observers lent, not wrapped in a ``RelayEvent``: an observer that reads them
/// that way gets each once, one that only knows ``RelayObserver/observe(_:)`` gets it as
/// `.message`, and one not interested in messages never sees it.
@Suite struct ObserverSetTests {
    final class Tally: RelayObserver, @unchecked Sendable {
        let interests: RelayEventInterests
        let borrows: Bool
        var lent: [UInt64] = []
        var wrapped: [UInt64] = []
        var others = 0

        init(interests: RelayEventInterests, borrows: Bool) {
            self.interests = interests
            self.borrows = borrows
        }

        func observe(_ event: RelayEvent) {
            if case .message(let message) = event { wrapped.append(message.message.number) } else { others += 1 }
        }

        func observe(message event: borrowing MessageEvent) {
            guard borrows else { return observe(.message(copy event)) }
            lent.append(event.message.number)
        }
    }

    /// Only ``RelayObserver/observe(_:)``: the protocol's default wraps the message for it.
    struct PlainObserver: RelayObserver {
        let interests: RelayEventInterests = .messages
        let seen: EventLog<RelayEvent>
        func observe(_ event: RelayEvent) { seen.append(event) }
    }

    @Test func eachMessageIsLentOnceToEachObserverThatWantsMessages() throws {
        let borrowing = Tally(interests: .messages, borrows: true)
        let wrapping = Tally(interests: [.messages, .frames], borrows: false)
        let framesOnly = Tally(interests: .frames, borrows: true)
        let plain = PlainObserver(seen: EventLog())
        let set = ObserverSet([borrowing, wrapping, framesOnly, plain])
        for number in 1...3 as ClosedRange<UInt64> {
            let message = BLIPMessage(type: .request, number: number, properties: Properties([("Profile", "echo")]),
                                      body: ByteBuffer(string: "{}"))
            set.emit(message: MessageEvent(sessionID: 9, direction: .clientToServer, message: message))
        }
        #expect(borrowing.lent == [1, 2, 3])
        #expect(borrowing.wrapped.isEmpty)
        #expect(wrapping.wrapped == [1, 2, 3])
        #expect(wrapping.lent.isEmpty)
        #expect(framesOnly.lent.isEmpty && framesOnly.wrapped.isEmpty && framesOnly.others == 0)
        let plainNumbers = plain.seen.all.compactMap { event -> UInt64? in
            if case .message(let message) = event { message.message.number } else { nil }
        }
        #expect(plainNumbers == [1, 2, 3])
    }
}
