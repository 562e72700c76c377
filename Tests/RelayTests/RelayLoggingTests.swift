import BLIPCore
import BLIPNIO
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing
@testable import Relay

/// The relay's log, built from the events of a real session through the relay: what a user reads,
/// and what must never appear in it.
@Suite struct RelayLoggingTests {
    /// A swift-log handler that keeps every line.
    final class LineCollector: LogHandler, @unchecked Sendable {
        private let lines = NIOLockedValueBox<[String]>([])
        var logLevel: Logger.Level
        var metadata: Logger.Metadata = [:]
        init(level: Logger.Level) { logLevel = level }
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.withLockedValue { $0.append(event.message.description) } }
        var all: [String] { lines.withLockedValue { $0 } }
    }

    /// Runs a short session with Basic credentials, a secret property and a reply, and returns
    /// the events the relay emitted.
    static func recordSession() async throws -> [RelayEvent] {
        let harness = try await RelayHarness.start()
        let credentials = Data("alice:s3cret-password".utf8).base64EncodedString()
        let outcome = try await harness.connect(headers: ["Authorization": "Basic \(credentials)",
                                                          "Cookie": "SyncGatewaySession=abcdef0123"])
        let client = try #require(outcome.connection)
        _ = try await withTimeout {
            try await client.request(.request(profile: "echo", properties: ["SessionToken": "tok-123", "seq": "7"],
                                              body: body("{\"_id\":\"doc-1\",\"secret\":\"body text\"}"), compressed: true))
        }
        try await client.close()
        _ = try await harness.recorder.sessionClosed()
        let events = harness.recorder.all
        try await harness.shutdown()
        return events
    }

    static func lines(_ events: [RelayEvent], format: RelayConfiguration.LogFormat, level: Logger.Level,
                      redactBodies: Bool = false) -> [String] {
        let collector = LineCollector(level: level)
        let logger = Logger(label: "test") { _ in collector }
        let observer = LoggingObserver(logger: logger, format: format, redactBodies: redactBodies)
        for event in events { observer.observe(event) }
        return collector.all
    }

    @Test func textLinesTellTheSessionStoryWithoutSecrets() async throws {
        let events = try await Self.recordSession()
        let lines = Self.lines(events, format: .text, level: .info)
        let text = lines.joined(separator: "\n")
        #expect(!text.contains("s3cret"), "the Basic password never appears")
        #expect(!text.contains("abcdef0123"), "the session cookie never appears")
        #expect(!text.contains("tok-123"), "token-like properties are redacted")
        let open = try #require(lines.first { $0.contains("event=open") || $0.contains("user=") })
        #expect(open.contains("user=alice"))
        #expect(open.contains("db=db"))
        let request = try #require(lines.first { $0.contains("type=MSG") && $0.contains("profile=echo") })
        #expect(request.contains("dir=C→U"))
        #expect(request.contains("seq=7"))
        #expect(request.contains("bodyBytes="))
        #expect(request.contains("summary="), "each message is also read by the replication analyzer")
        let summary = try #require(lines.first { $0.contains("event=summary") })
        #expect(summary.contains("session=") && summary.contains("conflicts=0"))
        let reply = try #require(lines.first { $0.contains("type=RPY") })
        #expect(reply.contains("dir=U→C"))
        #expect(reply.contains("re=echo"))
        #expect(reply.contains("rttMs="))
        let close = try #require(lines.first { $0.contains("event=close") })
        #expect(close.contains("1000"))
    }

    @Test func jsonLinesParseAndBodiesCanBeRedacted() async throws {
        let events = try await Self.recordSession()
        let lines = Self.lines(events, format: .json, level: .trace, redactBodies: true)
        #expect(lines.count >= 4)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["time"] != nil, "\(line)")
        }
        let text = lines.joined(separator: "\n")
        #expect(!text.contains("body text"), "with --redact-bodies a body is only its size and hash")
        #expect(text.contains("fnv1a64:"))
        #expect(!text.contains("s3cret") && !text.contains("tok-123"))
    }

    /// A sink that keeps the bytes it is given.
    final class ByteCollector: LogLineSink, @unchecked Sendable {
        private let bytes = NIOLockedValueBox<[UInt8]>([])
        func write(lines: UnsafeRawBufferPointer) { bytes.withLockedValue { $0.append(contentsOf: lines) } }
        var text: String { bytes.withLockedValue { String(decoding: $0, as: UTF8.self) } }
    }

    /// Given a sink, the observer writes the same lines it hands swift-log (timestamps aside),
    /// each ending in a newline, and leaves out what the logger's level leaves out.
    @Test func sinkLinesAreTheLoggerLines() async throws {
        let events = try await Self.recordSession()
        for format in [RelayConfiguration.LogFormat.text, .json] {
            for level in [Logger.Level.trace, .info, .warning] {
                let viaLogger = Self.lines(events, format: format, level: level)
                let sink = ByteCollector()
                let bypassed = LineCollector(level: level)
                let observer = LoggingObserver(logger: Logger(label: "level") { _ in bypassed }, format: format, sink: sink)
                for event in events { observer.observe(event) }
                let written = sink.text
                #expect(bypassed.all.isEmpty, "with a sink the logger only sets the level")
                #expect(written.isEmpty == viaLogger.isEmpty)
                #expect(written.isEmpty || written.hasSuffix("\n"))
                let viaSink = written.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
                #expect(viaSink.map(Self.withoutTime) == viaLogger.map(Self.withoutTime), "\(format) at \(level)")
            }
        }
    }

    /// A line with its timestamp (text: the first word; JSON: the `time` value) taken out.
    static func withoutTime(_ line: String) -> String {
        line.replacing(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z/, with: "T")
    }
}
