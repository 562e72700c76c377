import Capture
import Foundation
import Testing

/// How `inspect` orders what it is given: a relay run's `<session>-<n>.blipcap` parts grouped
/// into sessions and read in part order, sessions by name, pcaps after them.
@Suite struct CaptureInputsTests {
    static func part(_ name: String, _ part: UInt32, id: UInt64) -> CaptureInputs.File {
        CaptureInputs.File(path: "/caps/\(name)-\(part).blipcap", header: CaptureFileHeader(part: part, sessionID: id))
    }

    @Test func partsOfASessionAreOneInputInPartOrderAndSessionsGoByName() {
        let files = [Self.part("1700000000-42-10", 1, id: 10), CaptureInputs.File(path: "/caps/tap.pcap", header: nil),
                     Self.part("1700000000-42-2", 2, id: 2), Self.part("1700000000-42-2", 1, id: 2),
                     Self.part("1700000000-42-2", 3, id: 2)]
        #expect(CaptureInputs.plan(files: files) == [
            .session(name: "1700000000-42-2", paths: ["/caps/1700000000-42-2-1.blipcap", "/caps/1700000000-42-2-2.blipcap",
                                                     "/caps/1700000000-42-2-3.blipcap"], missingParts: []),
            .session(name: "1700000000-42-10", paths: ["/caps/1700000000-42-10-1.blipcap"], missingParts: []),
            .pcap(path: "/caps/tap.pcap"),
        ])
    }

    @Test func aMissingPartIsNamedAndARenamedFileIsItsOwnSession() {
        let files = [Self.part("s-7", 1, id: 7), Self.part("s-7", 3, id: 7),
                     CaptureInputs.File(path: "/elsewhere/keep.blipcap", header: CaptureFileHeader(part: 1, sessionID: 7))]
        #expect(CaptureInputs.plan(files: files) == [
            .session(name: "keep", paths: ["/elsewhere/keep.blipcap"], missingParts: []),
            .session(name: "s-7", paths: ["/caps/s-7-1.blipcap", "/caps/s-7-3.blipcap"], missingParts: [2]),
        ])
    }

    @Test func aDirectoryGivesItsCapturesAndAPartBringsTheLaterOnes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inputs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (session, parts) in [("run-2", 2), ("run-10", 1)] {
            // A one-byte limit: the flush at close, past it, starts part 2.
            let rotation = CaptureRotation(directory: directory, session: session, maxFileBytes: parts > 1 ? 1 : nil)
            let writer = try CaptureWriter(rotation: rotation, sessionID: UInt64(session.dropFirst(4))!)
            if parts > 1 { try writer.write(.note(time: .zero, text: "part")) }
            try writer.close()
        }
        try Data("not a capture".utf8).write(to: URL(fileURLWithPath: (directory as NSString).appendingPathComponent("notes.txt")))
        let planned = try CaptureInputs.plan([directory])
        #expect(planned.map(\.paths.count) == [2, 1])
        #expect(planned.first.map { if case .session(let name, _, _) = $0 { name } else { "" } } == "run-2")
        // Part 1 given alone brings part 2.
        #expect(try CaptureInputs.plan([(directory as NSString).appendingPathComponent("run-2-1.blipcap")]).first?.paths.count == 2)
        #expect(throws: CaptureError.self) { try CaptureInputs.plan([(directory as NSString).appendingPathComponent("nope.pcap")]) }
    }
}
