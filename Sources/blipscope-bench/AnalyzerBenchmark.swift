import BLIPCore
import Foundation
import NIOCore
import Replication

/// Messages per second through ``SessionAnalyzer`` for a changes/rev-heavy pull stream, in the
/// style of `blipscope-bench codec`: the stream is built first, then fed `rounds` times and the
/// best round counts. Each batch is a `changes` of `batchSize` entries, its reply wanting all,
/// one `rev` per entry (every tenth with an attachment) and its reply, and every tenth batch a
/// setCheckpoint exchange.
enum AnalyzerBenchmark {
    public struct Result: Sendable, CustomStringConvertible {
        public var messages: Int
        public var analyzerSeconds: Double
        public var parseOnlySeconds: Double

        public var messagesPerSecond: Double { Double(messages) / analyzerSeconds }
        public var parseOnlyMessagesPerSecond: Double { Double(messages) / parseOnlySeconds }
        public var nanosecondsPerMessage: Double { analyzerSeconds / Double(messages) * 1e9 }

        public var description: String {
            String(format: "analyzer: %d messages, %.0f msg/s (%.2f µs/msg); typed parsing alone %.0f msg/s",
                   messages, messagesPerSecond, nanosecondsPerMessage / 1000, parseOnlyMessagesPerSecond)
        }
    }

    /// Runs the benchmark over about `messages` messages and returns a one-line report.
    public static func run(messages: Int, batchSize: Int = 50, rounds: Int = 3) -> String {
        measure(messages: messages, batchSize: batchSize, rounds: rounds).description
    }

    public static func measure(messages: Int, batchSize: Int = 50, rounds: Int = 3) -> Result {
        let stream = makeStream(messages: messages, batchSize: batchSize)
        var best = Double.infinity
        var bestParse = Double.infinity
        for _ in 0..<max(1, rounds) {
            let start = DispatchTime.now().uptimeNanoseconds
            let analyzer = SessionAnalyzer(connection: 0)
            // By index, so each message is lent to the analyzer as the relay lends it, not copied.
            for index in stream.indices {
                analyzer.observe(message: stream[index].message, from: stream[index].direction, at: Double(index) * 0.0001)
            }
            _ = analyzer.summary()
            best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)

            let parseStart = DispatchTime.now().uptimeNanoseconds
            var violations = 0
            for index in stream.indices { violations &+= ReplicationMessage(stream[index].message).violations.count }
            precondition(violations >= 0)
            bestParse = min(bestParse, Double(DispatchTime.now().uptimeNanoseconds - parseStart) / 1e9)
        }
        return Result(messages: stream.count, analyzerSeconds: best, parseOnlySeconds: bestParse)
    }

    static func makeStream(messages: Int, batchSize: Int) -> [(message: BLIPMessage, direction: BLIPDirection)] {
        var stream: [(message: BLIPMessage, direction: BLIPDirection)] = []
        stream.reserveCapacity(messages + 2 * batchSize + 4)
        var serverNumber: MessageNumber = 0
        var clientNumber: MessageNumber = 0
        var sequence = 0
        var batch = 0
        let filler = String(repeating: "lorem ipsum ", count: 30)
        while stream.count < messages {
            serverNumber += 1
            var entries: [String] = []
            for offset in 0..<batchSize {
                entries.append("[\(sequence + offset + 1),\"doc-\(sequence + offset)\",\"1-\(digest(sequence + offset))\"]")
            }
            var changes = BLIPMessage.request(profile: ReplicationProfile.changes.rawValue, body: buffer("[" + entries.joined(separator: ",") + "]"))
            changes.number = serverNumber
            stream.append((changes, .serverToClient))
            let reply = BLIPMessage.reply(to: changes, body: buffer("[" + Array(repeating: "[]", count: batchSize).joined(separator: ",") + "]"))
            stream.append((reply, .clientToServer))
            var revNumbers: [MessageNumber] = []
            for offset in 0..<batchSize {
                serverNumber += 1
                let id = sequence + offset
                let attachment = id % 10 == 0
                    ? ",\"_attachments\":{\"photo\":{\"digest\":\"sha1-\(digest(id))\",\"length\":1234,\"stub\":true}}" : ""
                var rev = BLIPMessage.request(
                    profile: ReplicationProfile.rev.rawValue,
                    properties: Properties([.id: "doc-\(id)", .rev: "1-\(digest(id))", .sequence: "\(id + 1)"]),
                    body: buffer("{\"n\":\(id),\"text\":\"\(filler)\"\(attachment)}"))
                rev.number = serverNumber
                stream.append((rev, .serverToClient))
                revNumbers.append(serverNumber)
            }
            for number in revNumbers {
                stream.append((BLIPMessage(type: .response, number: number), .clientToServer))
            }
            sequence += batchSize
            batch += 1
            if batch % 10 == 0 {
                clientNumber += 1
                var set = BLIPMessage.request(profile: ReplicationProfile.setCheckpoint.rawValue, properties: Properties([.client: "bench", .rev: "0-\(batch / 10)"]),
                                              body: buffer("{\"remote\":\(sequence)}"))
                set.number = clientNumber
                stream.append((set, .clientToServer))
                stream.append((BLIPMessage.reply(to: set, properties: Properties([.rev: "0-\(batch / 10 + 1)"])), .serverToClient))
            }
        }
        return stream
    }

    private static func digest(_ value: Int) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 32 - hex.count)) + hex
    }

    private static func buffer(_ text: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeString(text)
        return buffer
    }
}
