import BLIPCore
import BLIPTestSupport
import Testing

/// The message-number table against a `Dictionary` doing the same things: requests numbered
/// upwards and answered out of order, as a relay sees them, and keys chosen to collide.
@Suite struct MessageNumberTableTests {
    /// Checks every key and the count and contents against the model.
    static func expectSame(_ table: MessageNumberTable<String>, _ model: [MessageNumber: String],
                           probing keys: some Sequence<MessageNumber>) {
        #expect(table.count == model.count)
        #expect(table.isEmpty == model.isEmpty)
        for key in keys { #expect(table[key] == model[key], "key \(key)") }
        var seen: [MessageNumber: String] = [:]
        for (key, value) in table { seen[key] = value }
        #expect(seen == model, "iteration yields each entry once")
        #expect(Set(table.values) == Set(model.values))
    }

    /// Requests numbered 1, 2, 3… with eight in flight, answered in a shuffled order, the way a
    /// pipelined peer answers: thousands of entries pass through a table that stays small.
    @Test func requestsInFlightAnsweredOutOfOrder() {
        var random = SeededRandom(seed: 18)
        var table = MessageNumberTable<String>()
        var model: [MessageNumber: String] = [:]
        var next: MessageNumber = 1
        for _ in 0..<5_000 {
            while model.count < 8 {
                #expect(table.updateValue("req \(next)", forKey: next) == nil)
                model[next] = "req \(next)"
                next += 1
            }
            let answered = model.keys.randomElement(using: &random)!
            #expect(table.removeValue(forKey: answered) == model.removeValue(forKey: answered))
            #expect(table.removeValue(forKey: answered) == nil, "answered once")
        }
        Self.expectSame(table, model, probing: 1...next)
    }

    /// Random inserts, replacements and removals over a small key range (many collisions and
    /// wrapped probe runs), checked against the model after each step.
    @Test func randomOperationsMatchADictionary() {
        var random = SeededRandom(seed: 7)
        var table = MessageNumberTable<String>()
        var model: [MessageNumber: String] = [:]
        for step in 0..<20_000 {
            let key = MessageNumber.random(in: 0...300, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0, 1:
                #expect(table.updateValue("v\(step)", forKey: key) == model.updateValue("v\(step)", forKey: key))
            default:
                #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key))
            }
            if step % 1_000 == 0 { Self.expectSame(table, model, probing: 0...300) }
        }
        Self.expectSame(table, model, probing: 0...300)
    }

    /// Keys that share a home slot (multiples of a large power of two land on one slot of a
    /// small table) are all found, and removing one from the middle of their run keeps the rest.
    @Test func collidingKeysStayFindable() {
        var table = MessageNumberTable<String>()
        var model: [MessageNumber: String] = [:]
        let keys = (1...7).map { MessageNumber($0) << 40 }
        for key in keys {
            table[key] = "k\(key)"
            model[key] = "k\(key)"
        }
        table[keys[3]] = nil
        model[keys[3]] = nil
        table[keys[0]] = nil
        model[keys[0]] = nil
        Self.expectSame(table, model, probing: keys)
        #expect(table.contains(keys[6]) && !table.contains(keys[3]))
    }

    /// The set form the decoder uses for requests awaiting replies; message number 0 is a key
    /// like any other; removeAll empties the table.
    @Test func setFormAndRemoveAll() {
        var awaited = MessageNumberTable<Void>()
        let zeroAdded = awaited.insert(0), fiveAdded = awaited.insert(5), fiveAgain = awaited.insert(5)
        #expect(zeroAdded && fiveAdded)
        #expect(!fiveAgain, "already there")
        #expect(awaited.contains(0) && awaited.contains(5) && !awaited.contains(6))
        let removed = awaited.remove(5), removedAgain = awaited.remove(5)
        #expect(removed && !removedAgain)
        for number in 1...1_000 { awaited.insert(MessageNumber(number)) }
        #expect(awaited.count == 1_001)
        awaited.removeAll()
        #expect(awaited.isEmpty && !awaited.contains(0) && !awaited.contains(500))
    }
}
